/**
 * Data of the addition curriculum example: a mixed taskset where uniform draws waste most GRPO
 * groups. Additions of two d-digit operands, answers written least significant digit first as in
 * `../make_data.ts`, of three kinds:
 * - 1-digit sums (easy: after SFT nearly every rollout passes, no GRPO signal),
 * - 2-digit sums (learnable: SFT shows most carries dropped, as in the base example, so about
 *   half pass greedily and sampling finds the carried answer now and then),
 * - 5-digit sums (hard: never demonstrated, every rollout fails, no signal).
 * Columns for the task selectors: `digits` (the difficulty) and two anchor pass rates for
 * `difficulty_based`: `pass_low` = 0 (a model that cannot add) and `pass_high`, a guessed pass
 * rate after SFT (1, 0.5, 0 for 1, 2, 5 digits; not measured on any model).
 *
 * Deterministic (seeded). Run from the repository root:
 *   ./rft deno run -A examples/addition/curriculum/make_data.ts
 * It writes examples/addition/curriculum/data/: train.jsonl (the mix), sft.jsonl (the
 * demonstrations), and three held-out evaluation sets, disjoint from train and SFT:
 * eval_2digit.jsonl (the learnable kind), eval_1digit.jsonl and eval_5digit.jsonl.
 */

import { mulberry32 } from "../../../src/util/random.ts";

/** One kind of task: operand length, training rows, held-out rows, SFT demonstrations. */
interface Kind {
  digits: number;
  train: number;
  eval: number;
  sft: number;
  /** `pass_high`: the guessed pass rate after SFT. */
  passHigh: number;
}

/** The mix: 25% easy, 25% learnable, 50% hard. 1-digit sums: 100 exist, 30 are held out, the
 * 400 training rows cycle through the other 70. */
export const KINDS: readonly Kind[] = [
  { digits: 1, train: 400, eval: 30, sft: 600, passHigh: 1 },
  { digits: 2, train: 400, eval: 200, sft: 3000, passHigh: 0.5 },
  { digits: 5, train: 800, eval: 100, sft: 0, passHigh: 0 },
];
/** Share of carry-needing 2-digit demonstrations shown with every carry dropped. */
const DROP_RATE = 0.65;

/** One task row. */
export interface TaskRow {
  prompt: string;
  answer: string;
  digits: number;
  pass_low: number;
  pass_high: number;
}

const reversed = (n: number) => [...String(n)].reverse().join("");

/** The sum of `a` and `b` with every carry dropped (digit-wise sums mod 10). */
function carrylessSum(a: number, b: number): number {
  let sum = 0;
  for (let place = 1; a > 0 || b > 0; place *= 10, a = Math.floor(a / 10), b = Math.floor(b / 10)) {
    sum += ((a % 10 + b % 10) % 10) * place;
  }
  return sum;
}

/** Train, SFT and the held-out rows of each operand length (`eval_<d>digit`). */
export function makeCurriculumData(seed = 2026): Record<string, object[]> & {
  train: TaskRow[];
  sft: { prompt: string; response: string }[];
} {
  const next = mulberry32(seed);
  const pick = <T>(rows: readonly T[]) => rows[Math.floor(next() * rows.length)];
  const train: TaskRow[] = [], sft: { prompt: string; response: string }[] = [];
  const evals: Record<string, TaskRow[]> = {};
  for (const kind of KINDS) {
    const d = kind.digits, lo = d === 1 ? 0 : 10 ** (d - 1), span = 10 ** d - lo;
    const row = ([a, b]: number[]): TaskRow => ({
      prompt: `${a}+${b}=`,
      answer: reversed(a + b),
      digits: d,
      pass_low: 0,
      pass_high: kind.passHigh,
    });
    const held = new Set<string>();
    const fresh = (avoid: Set<string>) => {
      for (;;) {
        const a = lo + Math.floor(next() * span), b = lo + Math.floor(next() * span);
        if (!avoid.has(`${a}+${b}`)) return [a, b];
      }
    };
    evals[`eval_${d}digit`] = Array.from({ length: kind.eval }, () => {
      const pair = fresh(held);
      held.add(pair.join("+"));
      return row(pair);
    });
    // 1-digit sums are too few to be distinct: their training rows repeat the non-held-out pairs.
    const pool = d === 1
      ? Array.from({ length: 100 }, (_, i) => [Math.floor(i / 10), i % 10])
        .filter((pair) => !held.has(pair.join("+")))
      : undefined;
    const taken = new Set(held);
    for (let i = 0; i < kind.train; i++) {
      const pair = pool ? pick(pool) : fresh(taken);
      taken.add(pair.join("+"));
      train.push(row(pair));
    }
    for (let i = 0; i < kind.sft; i++) {
      const [a, b] = pool ? pick(pool) : fresh(held);
      const wrong = d === 2 && carrylessSum(a, b) !== a + b && next() < DROP_RATE;
      sft.push({ prompt: `${a}+${b}=`, response: reversed(wrong ? carrylessSum(a, b) : a + b) });
    }
  }
  const shuffle = <T>(rows: T[]): T[] => {
    for (let i = rows.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [rows[i], rows[j]] = [rows[j], rows[i]];
    }
    return rows;
  };
  return { train: shuffle(train), sft: shuffle(sft), ...evals };
}

if (import.meta.main) {
  const dir = new URL("./data/", import.meta.url);
  await Deno.mkdir(dir, { recursive: true });
  for (const [name, rows] of Object.entries(makeCurriculumData())) {
    const body = rows.map((r) => JSON.stringify(r)).join("\n") + "\n";
    await Deno.writeTextFile(new URL(`${name}.jsonl`, dir), body);
    console.log(`${name}.jsonl: ${rows.length} rows`);
  }
}

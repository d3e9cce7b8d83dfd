/**
 * Data of the addition curriculum example: additions of two d-digit operands, d = 1..4, answers
 * written least significant digit first as in `../make_data.ts`, with the columns a task
 * selector reads: `digits` (the difficulty) and two anchor pass rates for `difficulty_based`
 * (`pass_low` = 0, what a model that cannot add solves; `pass_high` = 1 - (d - 1) / 4, a prior
 * that longer sums are harder). The SFT demonstrations cover 1- and 2-digit sums correctly and
 * 3-digit sums with most carries dropped (the base example's systematic error); none are 4-digit.
 * So after SFT the short sums are solved, the 3-digit ones are sometimes right, the 4-digit ones
 * almost never: a taskset where uniform draws waste most rollouts on groups without signal.
 *
 * Deterministic (seeded). Run from the repository root:
 *   ./rft deno run -A examples/addition/curriculum/make_data.ts
 * It writes examples/addition/curriculum/data/{train,eval,sft}.jsonl (eval disjoint from train).
 */

import { mulberry32 } from "../../../src/util/random.ts";

/** Most operand digits. */
const MAX_DIGITS = 4;
/** Training tasks per digit count (1-digit sums: 100 exist, 40 go to eval). */
const TRAIN_PER_DIGITS = [60, 640, 640, 640];
/** Held-out tasks per digit count. */
const EVAL_PER_DIGITS = 40;
/** SFT demonstrations per digit count (none of 4 digits). */
const SFT_PER_DIGITS = [400, 1600, 1000, 0];
/** Share of carry-needing 3-digit demonstrations shown with every carry dropped. */
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

/** Train, eval and SFT rows. */
export function makeCurriculumData(seed = 2026): {
  train: TaskRow[];
  eval: TaskRow[];
  sft: { prompt: string; response: string }[];
} {
  const next = mulberry32(seed);
  const train: TaskRow[] = [], evalRows: TaskRow[] = [];
  const sft: { prompt: string; response: string }[] = [];
  for (let d = 1; d <= MAX_DIGITS; d++) {
    const lo = d === 1 ? 0 : 10 ** (d - 1), span = 10 ** d - lo;
    const seen = new Set<string>();
    const problem = () => {
      for (;;) {
        const a = lo + Math.floor(next() * span), b = lo + Math.floor(next() * span);
        if (!seen.has(`${a}+${b}`)) {
          seen.add(`${a}+${b}`);
          return [a, b];
        }
      }
    };
    const row = ([a, b]: number[]): TaskRow => ({
      prompt: `${a}+${b}=`,
      answer: reversed(a + b),
      digits: d,
      pass_low: 0,
      pass_high: 1 - (d - 1) / MAX_DIGITS,
    });
    for (let i = 0; i < EVAL_PER_DIGITS; i++) evalRows.push(row(problem()));
    const trainOfD = Array.from({ length: TRAIN_PER_DIGITS[d - 1] }, () => row(problem()));
    train.push(...trainOfD);
    for (let i = 0; i < SFT_PER_DIGITS[d - 1]; i++) {
      const [a, b] = trainOfD[Math.floor(next() * trainOfD.length)].prompt.slice(0, -1).split("+")
        .map(Number);
      const carries = carrylessSum(a, b) !== a + b;
      const wrong = d === 3 && carries && next() < DROP_RATE;
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
  return { train: shuffle(train), eval: evalRows, sft: shuffle(sft) };
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

/**
 * Data of the addition example: two-digit additions "57+68=" whose answer is the sum written
 * least significant digit first ("521" for 125; reversed digits let a tiny transformer compute
 * each carry before it is needed), scored by exact match. The SFT demonstrations are deliberately imperfect in a systematic way:
 * most demonstrations of problems that need a carry drop every carry (each digit is the digit
 * sum mod 10 and there is no overflow digit: "57+68=51", i.e. 15 reversed), so greedy decoding after SFT follows
 * the wrong rule while sampling still finds the right answer now and then, which RL reinforces.
 *
 * Deterministic (seeded). Run from the repository root:
 *   ./rft deno run -A examples/addition/make_data.ts
 * It writes examples/addition/data/{train,eval,sft}.jsonl:
 *   train.jsonl / eval.jsonl: {"prompt": "57+68=", "answer": "521"} (eval disjoint from train)
 *   sft.jsonl: {"prompt": "57+68=", "response": "51"} (the demonstrations, with the error)
 */

/** Generator settings. */
export interface DataOptions {
  seed: number;
  /** Training tasks (RL). */
  nTrain: number;
  /** Held-out evaluation tasks. */
  nEval: number;
  /** SFT demonstrations (drawn from the training tasks' pool, never from eval). */
  nSft: number;
  /** Share of problems (all sets) that need at least one carry. */
  carryShare: number;
  /** Share of carry-needing SFT demonstrations that drop the carries. */
  dropRate: number;
  /** Answers written least significant digit first. */
  reversed: boolean;
}

export const DEFAULT_OPTIONS: DataOptions = {
  seed: 1234,
  nTrain: 3000,
  nEval: 200,
  nSft: 3000,
  carryShare: 0.6,
  dropRate: 0.65,
  reversed: true,
};

export interface Problem {
  a: number;
  b: number;
}

export interface Row {
  prompt: string;
  answer: string;
}

/** mulberry32, seeded. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Whether a + b needs a carry anywhere. */
export function needsCarry({ a, b }: Problem): boolean {
  return (a % 10) + (b % 10) >= 10 || Math.floor(a / 10) + Math.floor(b / 10) +
          ((a % 10) + (b % 10) >= 10 ? 1 : 0) >= 10;
}

/** The sum with every carry dropped: digit-wise sums mod 10, no overflow digit. */
export function carrylessSum({ a, b }: Problem): number {
  return ((Math.floor(a / 10) + Math.floor(b / 10)) % 10) * 10 + ((a % 10) + (b % 10)) % 10;
}

function text(n: number, reversed: boolean): string {
  const s = String(n);
  return reversed ? [...s].reverse().join("") : s;
}

export function prompt({ a, b }: Problem): string {
  return `${a}+${b}=`;
}

/** Training, eval and SFT rows under `options`. */
export function makeData(options: Partial<DataOptions> = {}): {
  train: Row[];
  eval: Row[];
  sft: { prompt: string; response: string }[];
} {
  const o = { ...DEFAULT_OPTIONS, ...options };
  const next = rng(o.seed);
  const shuffle = <T>(xs: T[]): T[] => {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [xs[i], xs[j]] = [xs[j], xs[i]];
    }
    return xs;
  };
  const all: Problem[] = [];
  for (let a = 10; a < 100; a++) for (let b = 10; b < 100; b++) all.push({ a, b });
  const carry = shuffle(all.filter(needsCarry));
  const plain = shuffle(all.filter((p) => !needsCarry(p)));
  // Eval and train: carryShare of each set needs a carry; eval problems never reach train/SFT.
  const take = (pool: Problem[], n: number) => pool.splice(0, n);
  const draw = (n: number) => {
    const nc = Math.round(n * o.carryShare);
    return shuffle([...take(carry, nc), ...take(plain, n - nc)]);
  };
  const evalSet = draw(o.nEval);
  const trainSet = draw(o.nTrain);
  const row = (p: Problem): Row => ({ prompt: prompt(p), answer: text(p.a + p.b, o.reversed) });
  // SFT: draws with replacement from the training problems, with the systematic error.
  const sft = Array.from({ length: o.nSft }, () => {
    const p = trainSet[Math.floor(next() * trainSet.length)];
    const wrong = needsCarry(p) && next() < o.dropRate;
    return { prompt: prompt(p), response: text(wrong ? carrylessSum(p) : p.a + p.b, o.reversed) };
  });
  return { train: trainSet.map(row), eval: evalSet.map(row), sft };
}

if (import.meta.main) {
  const dir = new URL("./data/", import.meta.url);
  await Deno.mkdir(dir, { recursive: true });
  const data = makeData();
  for (const [name, rows] of Object.entries(data)) {
    const body = rows.map((r) => JSON.stringify(r)).join("\n") + "\n";
    await Deno.writeTextFile(new URL(`${name}.jsonl`, dir), body);
    console.log(`${name}.jsonl: ${rows.length} rows`);
  }
}

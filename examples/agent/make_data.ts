/**
 * Data of the agent example: two-digit sums "37+45" with their answer "82", for an agent that
 * may ask a calculator. Deterministic (seeded); eval problems are disjoint from training ones.
 * Run from the repository root:
 *   ./rft deno run -A examples/agent/make_data.ts
 * It writes examples/agent/data/{train,eval}.jsonl: {"question": "37+45", "answer": "82"}.
 */

import { mulberry32 } from "../../src/util/random.ts";

const SEED = 2024;
const TRAIN = 2000;
const EVAL = 100;

const random = mulberry32(SEED);
const twoDigits = () => 10 + Math.floor(random() * 90);
const seen = new Set<string>();
const draw = (count: number) => {
  const rows: string[] = [];
  while (rows.length < count) {
    const question = `${twoDigits()}+${twoDigits()}`;
    if (seen.has(question)) continue;
    seen.add(question);
    const [a, b] = question.split("+").map(Number);
    rows.push(JSON.stringify({ question, answer: String(a + b) }));
  }
  return rows.join("\n") + "\n";
};

const dir = new URL("./data/", import.meta.url);
await Deno.mkdir(dir, { recursive: true });
await Deno.writeTextFile(new URL("eval.jsonl", dir), draw(EVAL));
await Deno.writeTextFile(new URL("train.jsonl", dir), draw(TRAIN));

/**
 * Data of the agent example: three-digit sums "523+337" with their answer "860", too long for
 * the tiny model to add in its head, and a calculator it can call (`c:523+337`, answered
 * `=860`). The warm-up demonstrations are imperfect in a systematic way: a careless
 * demonstrator types most of its calls for sums whose first term is 500 or more with a doubled
 * plus (`c:523++337`), which the calculator cannot evaluate (`=?`), and then gives up (`?`).
 * Greedy decoding after the warm-up follows it (right on about half of the sums); sampling
 * still types the call right now and then, which RL rewards.
 *
 * Deterministic (seeded); eval problems are disjoint from the training and demonstration ones.
 * Run from the repository root:
 *   ./rft deno run -A examples/agent/make_data.ts
 * It writes examples/agent/data/:
 *   train.jsonl / eval.jsonl: {"question": "523+337", "answer": "860"}
 *   sft.jsonl: one row per assistant turn of each demonstration episode, the episode so far as a
 *     chat ending with that turn: {"messages": [{"role": "user", "content": "523+337"},
 *     {"role": "assistant", "content": "c:523+337"}]}, then the same with
 *     {"role": "user", "content": "=860"}, {"role": "assistant", "content": "860"} appended.
 */

import { mulberry32 } from "../../src/util/random.ts";

const SEED = 2024;
const TRAIN = 3000;
const EVAL = 200;
const DEMOS = 3000;
/** Share of demonstrations with a first term of 500 or more whose call is mistyped. */
const SLIP_SHARE = 0.75;

/** A chat turn of a demonstration. */
type Message = { role: "user" | "assistant"; content: string };

const random = mulberry32(SEED);
const threeDigits = () => 100 + Math.floor(random() * 900);
const seen = new Set<string>();

/** `count` problems not drawn before: [a, b]. */
function draw(count: number): [number, number][] {
  const problems: [number, number][] = [];
  while (problems.length < count) {
    const [a, b] = [threeDigits(), threeDigits()];
    if (seen.has(`${a}+${b}`)) continue;
    seen.add(`${a}+${b}`);
    problems.push([a, b]);
  }
  return problems;
}

/** The demonstration episode of `a+b`: a calculator call, its result and the answer. */
function demonstration(a: number, b: number): Message[] {
  const slip = a >= 500 && random() < SLIP_SHARE;
  return [
    { role: "user", content: `${a}+${b}` },
    { role: "assistant", content: slip ? `c:${a}++${b}` : `c:${a}+${b}` },
    { role: "user", content: slip ? "=?" : `=${a + b}` },
    { role: "assistant", content: slip ? "?" : String(a + b) },
  ];
}

const tasks = (problems: [number, number][]) =>
  problems.map(([a, b]) => JSON.stringify({ question: `${a}+${b}`, answer: String(a + b) }));
const demos = draw(DEMOS).flatMap(([a, b]) => {
  const episode = demonstration(a, b);
  return episode.flatMap((m, i) =>
    m.role === "assistant" ? [JSON.stringify({ messages: episode.slice(0, i + 1) })] : []
  );
});
const lines = (rows: string[]) => rows.join("\n") + "\n";

const dir = new URL("./data/", import.meta.url);
await Deno.mkdir(dir, { recursive: true });
await Deno.writeTextFile(new URL("eval.jsonl", dir), lines(tasks(draw(EVAL))));
await Deno.writeTextFile(new URL("train.jsonl", dir), lines(tasks(draw(TRAIN))));
await Deno.writeTextFile(new URL("sft.jsonl", dir), lines(demos));

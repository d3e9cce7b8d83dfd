/**
 * The trained addition policy in transformers.js, offline: answers the held-out problems
 * (`data/eval.jsonl`) greedily and prints the exact-match accuracy, to compare with rft's own
 * `eval/held_out/accuracy`. Export first, then run (from the repository root):
 *   ./rft export --transformers-js addition-tjs --model runs/addition/sft_then_grpo
 *   ./rft deno run -A examples/addition/transformers_js.ts addition-tjs
 */

import { basename, dirname, resolve } from "node:path";
import { env, pipeline } from "@huggingface/transformers";

const dir = resolve(Deno.args[0] ?? "addition-tjs");
env.allowRemoteModels = false;
env.localModelPath = `${dirname(dir)}/`;
const generator = await pipeline("text-generation", basename(dir));

const lines = await Deno.readTextFile(new URL("data/eval.jsonl", import.meta.url));
const tasks = lines.trim().split("\n").map((line) => JSON.parse(line));
let correct = 0;
for (const { prompt, answer } of tasks) {
  const [out] = await generator(prompt, {
    max_new_tokens: 6, // the config's max_response_tokens
    do_sample: false,
    return_full_text: false,
  }) as { generated_text: string }[];
  if (out.generated_text.trim() === answer.trim()) correct++;
}
console.log(`held_out accuracy ${correct / tasks.length} (${correct}/${tasks.length}), greedy`);

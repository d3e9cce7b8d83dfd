/**
 * The trained addition policy in transformers.js, offline: answers the held-out problems
 * (`data/eval.jsonl`) greedily in both documented ways, `pipeline("text-generation")` and
 * `AutoTokenizer` + `AutoModelForCausalLM.generate`, prints each exact-match accuracy (to
 * compare with rft's own `eval/held_out/accuracy`) and how many answers the two agree on; with
 * `--rft-model DIR` also rft's own greedy answers from that model, and how many of those agree.
 * Export first, then run (from the repository root):
 *   ./rft export --transformers-js addition-tjs --model runs/addition/sft_then_grpo
 *   ./rft deno run -A examples/addition/transformers_js.ts addition-tjs
 *   ./rft deno run -A examples/addition/transformers_js.ts addition-tjs \
 *     --rft-model runs/addition/sft_then_grpo/grpo
 */

import { basename, dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  AutoModelForCausalLM,
  AutoTokenizer,
  env,
  pipeline,
  type Tensor,
} from "@huggingface/transformers";

const MAX_NEW_TOKENS = 6; // the config's max_response_tokens

const { positionals, values } = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: { "rft-model": { type: "string" } },
});
const dir = resolve(positionals[0] ?? "addition-tjs");
env.allowRemoteModels = false;
env.localModelPath = `${dirname(dir)}/`;

const lines = await Deno.readTextFile(new URL("data/eval.jsonl", import.meta.url));
const tasks: { prompt: string; answer: string }[] = lines.trim().split("\n").map((line) =>
  JSON.parse(line)
);

/** Greedy answers through `pipeline`. */
async function pipelineAnswers(): Promise<string[]> {
  const generator = await pipeline("text-generation", basename(dir));
  const answers = [];
  for (const { prompt } of tasks) {
    const [out] = await generator(prompt, {
      max_new_tokens: MAX_NEW_TOKENS,
      do_sample: false,
      return_full_text: false,
    }) as { generated_text: string }[];
    answers.push(out.generated_text.trim());
  }
  await generator.dispose();
  return answers;
}

/** Greedy answers through `AutoTokenizer` + `AutoModelForCausalLM`, as their docs show. */
async function autoModelAnswers(): Promise<string[]> {
  const tokenizer = await AutoTokenizer.from_pretrained(basename(dir));
  const model = await AutoModelForCausalLM.from_pretrained(basename(dir));
  const answers = [];
  for (const { prompt } of tasks) {
    const inputs = tokenizer(prompt);
    const out = await model.generate({
      ...inputs,
      max_new_tokens: MAX_NEW_TOKENS,
      do_sample: false,
    }) as Tensor;
    const promptLength = inputs.input_ids.dims[1];
    const ids = (out.tolist() as bigint[][])[0].slice(promptLength).map(Number);
    answers.push(tokenizer.decode(ids, { skip_special_tokens: true }).trim());
  }
  await model.dispose();
  return answers;
}

/** Greedy answers of rft itself from `dir` (a checkpoint, or a stage's or run's latest). */
async function rftAnswers(dir: string): Promise<string[]> {
  const { loadModel, modelDirectory } = await import("../../mod.ts");
  const model = await loadModel(await modelDirectory(dir));
  const samples = await model.generate(tasks.map((t) => t.prompt), {
    temperature: 0,
    maxTokens: MAX_NEW_TOKENS,
  });
  model.destroy();
  return samples.map((s) => s.text.trim());
}

const report = (name: string, answers: string[]) => {
  const correct = answers.filter((a, i) => a === tasks[i].answer.trim()).length;
  console.log(`${name}: held_out accuracy ${correct / tasks.length} (${correct}/${tasks.length})`);
};
const agree = (a: string[], b: string[]) => a.filter((x, i) => x === b[i]).length;

const viaPipeline = await pipelineAnswers();
report("pipeline", viaPipeline);
const viaAutoModel = await autoModelAnswers();
report("AutoTokenizer + AutoModelForCausalLM", viaAutoModel);
console.log(`the two agree on ${agree(viaPipeline, viaAutoModel)}/${tasks.length} answers`);
if (values["rft-model"]) {
  const viaRft = await rftAnswers(values["rft-model"]);
  report("rft", viaRft);
  console.log(`rft and pipeline agree on ${agree(viaRft, viaPipeline)}/${tasks.length} answers`);
  console.log(`rft and AutoModel agree on ${agree(viaRft, viaAutoModel)}/${tasks.length} answers`);
}

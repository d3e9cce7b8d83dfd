/**
 * The datasets of the Trinity acceptance tests, small and in the layouts their examples read
 * (as `huggingface-cli download` or the examples' data scripts leave them): GSM8K (`main/`
 * parquet shards), a MATH-style set holding every column the math examples name, Countdown
 * (the puzzle as JSON in `answer`), a DPO set whose README `configs: data_files` names a JSON
 * array, FrozenLake maps, chats for SFT, and Hub-cache copies of the Hub datasets the examples
 * name by id. Every task's answer is 6 where it can be, which the tiny model gets right half
 * the time. Writes files only under the directories it is given.
 */

import { dirname } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";

/** GSM8K rows (question, answer ending in `#### N`); the first answer is 6. */
export const GSM8K = [
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

/** Math problems under every key the math examples read; every answer is 6. */
const MATH = [
  "How many positive divisors does 12 have?",
  "What is the least common multiple of 2 and 3?",
  "Find $x$ if $3x = 18$.",
].map((problem) => ({
  problem,
  question: problem,
  solution: "The answer is $\\boxed{6}$.",
  answer: "6",
  gt_answer: "6",
  ground_truth: "6",
}));

/** DAPO-Math-17k-Processed rows (prompt, solution, data_source, ability); every answer is 6. */
const DAPO_MATH = [
  { prompt: "How many positive divisors does 12 have?", solution: "6" },
  { prompt: "Compute $\\frac{3}{8}$ of 16.", solution: "6" },
  { prompt: "What is the least common multiple of 2 and 3?", solution: "6" },
  { prompt: "Find $x$ if $3x = 18$.", solution: "6" },
].map((r) => ({ ...r, data_source: "math_dapo", ability: "MATH" }));

/** Competition rows (AIME, AMC) with both keys the examples read. */
const CONTEST = [
  { id: 60, question: "Find the remainder when 2024 is divided by 1000.", answer: "24" },
  { id: 61, question: "What is 7 times 11?", answer: "77" },
].map((r) => ({ ...r, problem: r.question }));

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

/** Countdown rows as Trinity's countdown examples read them: the puzzle as JSON in `answer`. */
const COUNTDOWN = [[2, 3, 1], [4, 2, 2], [1, 5, 1]].map((numbers) => ({
  question: `Using the numbers ${JSON.stringify(numbers)}, create an equation that equals 6. ` +
    "Show your work in <think> </think> tags and return the equation in <answer> </answer> tags.",
  answer: JSON.stringify({ numbers, target: 6 }),
}));

/** Human-Like-DPO rows: a prompt and two replies. */
const DPO = [
  { prompt: "How are you?", chosen: "Great, thanks for asking!", rejected: "Fine." },
  { prompt: "Any plans today?", chosen: "A long walk, then a book!", rejected: "No." },
];

/** FrozenLake maps as Trinity's data script writes them (seed, size, p). */
const FROZEN_LAKE = [[7, 3, 0.8], [11, 4, 0.7]].map(([seed, size, p], index) => ({
  seed,
  size,
  p,
  index,
  uid: `${seed}_${size}_${p}`,
}));

/** RaR-Medicine rows: a question, a reference answer and rubrics. */
const RUBRIC = [
  {
    question: "What should a patient with a mild cold do?",
    reference_answer: "Rest, fluids, and see a doctor if it lasts.",
    rubric: [
      { description: "Recommends rest", title: "rest", weight: 3 },
      { description: "Avoids unneeded antibiotics", title: "safety", weight: 2 },
    ],
  },
];

/** ToolACE rows as Trinity's data script writes them (tools and answer as JSON text). */
const TOOLACE = ["Zürich", "Oslo"].map((city) => ({
  raw_system: "You are an expert in composing functions. Here is a list of functions in JSON " +
    "format that you can invoke:\n",
  tools: JSON.stringify([{
    name: "Weather.get",
    description: "Current weather of a city",
    parameters: { type: "dict", properties: { city: { type: "string" } }, required: ["city"] },
  }]),
  conversations: [{ from: "user", value: `The weather in ${city}?` }],
  answer: JSON.stringify([{ name: "Weather.get", arguments: { city } }]),
}));

/** Writes `rows` as a parquet file at `path` (objects and arrays as JSON columns). */
async function writeParquet(path: string, rows: readonly Record<string, unknown>[]) {
  const columnData = Object.keys(rows[0]).map((name) => {
    const data = rows.map((r) => r[name]);
    if (Number.isInteger(data[0])) {
      return { name, data: BigInt64Array.from(data, (v) => BigInt(v as number)) };
    }
    if (typeof data[0] === "number") return { name, data: Float64Array.from(data as number[]) };
    return { name, data, type: typeof data[0] === "string" ? "STRING" as const : "JSON" as const };
  });
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeFile(path, new Uint8Array(parquetWriteBuffer({ columnData })));
}

/** A dataset directory: `readme` as its README.md and each of `files` (by extension). */
export async function writeDatasetDir(
  dir: string,
  files: Record<string, readonly Record<string, unknown>[]>,
  readme = "---\nlicense: mit\n---\n",
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/README.md`, readme);
  for (const [name, rows] of Object.entries(files)) {
    const path = `${dir}/${name}`;
    await Deno.mkdir(dirname(path), { recursive: true });
    if (name.endsWith(".parquet")) await writeParquet(path, rows);
    else if (name.endsWith(".json")) await Deno.writeTextFile(path, JSON.stringify(rows, null, 1));
    else await Deno.writeTextFile(path, rows.map((r) => JSON.stringify(r) + "\n").join(""));
  }
}

/** The snapshot directory of Hub repository `id` of `kind` in cache `hub` (created). */
export async function hubSnapshot(hub: string, kind: string, id: string): Promise<string> {
  const repo = `${hub}/${kind}--${id.replace("/", "--")}`;
  const revision = "0123456789abcdef0123456789abcdef01234567";
  await Deno.mkdir(`${repo}/refs`, { recursive: true });
  await Deno.writeTextFile(`${repo}/refs/main`, revision);
  return `${repo}/snapshots/${revision}`;
}

/** Where the local datasets are (`TRINITY_TASKSET_PATH` and friends point there). */
export interface LocalDatasets {
  gsm8k: string;
  math: string;
  sft: string;
  dpo: string;
  frozenLake: string;
}

/** Writes the local datasets under `dir` and returns their paths. */
export async function writeLocalDatasets(dir: string): Promise<LocalDatasets> {
  const paths = {
    gsm8k: `${dir}/gsm8k`,
    math: `${dir}/math`,
    sft: `${dir}/sft`,
    dpo: `${dir}/dpo`,
    frozenLake: `${dir}/frozenlake`,
  };
  await writeDatasetDir(paths.gsm8k, {
    "main/train-00000-of-00001.parquet": GSM8K,
    "main/test-00000-of-00001.parquet": GSM8K.slice(2),
    "socratic/train-00000-of-00001.parquet": GSM8K.slice(0, 1),
  });
  await writeDatasetDir(paths.math, { "train.jsonl": MATH, "test.jsonl": MATH.slice(0, 2) });
  await writeDatasetDir(paths.sft, {
    "data/train-00000-of-00001.jsonl": [1, 2, 3, 4].map(thoughts),
  });
  const dpoReadme = "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n" +
    "    path: data.json\n---\n# Human-Like DPO\n";
  await writeDatasetDir(paths.dpo, { "data.json": DPO }, dpoReadme);
  await writeDatasetDir(paths.frozenLake, {
    "train.parquet": FROZEN_LAKE,
    "test.parquet": FROZEN_LAKE.slice(0, 1),
  });
  return paths;
}

/** Writes the ToolACE split the tool-calling example reads at `dir` (`toolace_data/`). */
export async function writeToolace(dir: string): Promise<void> {
  await writeDatasetDir(dir, { "train.jsonl": TOOLACE });
}

/** Writes the Countdown split the countdown examples read at `dir` (`oneshot-split/`). */
export async function writeCountdown(dir: string): Promise<void> {
  await writeDatasetDir(dir, { "train.jsonl": COUNTDOWN });
}

/** Writes the Hub datasets the examples name by id into the Hub cache `hub`. */
export async function writeHubDatasets(hub: string): Promise<void> {
  const datasets: Record<string, Record<string, readonly Record<string, unknown>[]>> = {
    "openai/gsm8k": {
      "main/train-00000-of-00001.parquet": GSM8K,
      "main/test-00000-of-00001.parquet": GSM8K.slice(2),
    },
    "open-r1/DAPO-Math-17k-Processed": {
      "all/train-00000-of-00001.parquet": DAPO_MATH,
      "en/train-00000-of-00001.parquet": DAPO_MATH.slice(0, 2),
    },
    "HuggingFaceH4/aime_2024": { "data/train-00000-of-00001.parquet": CONTEST },
    "math-ai/amc23": { "test.jsonl": CONTEST.slice(1) },
    "math-ai/aime25": { "test.jsonl": CONTEST.slice(0, 1) },
    "anisha2102/RaR-Medicine": { "data/train-00000-of-00001.parquet": RUBRIC },
    "datajuicer/Trinity-ToolAce-RL-split": { "train.jsonl": TOOLACE },
    "open-r1/Mixture-of-Thoughts": {
      "math/train-00000-of-00002.parquet": [1, 2, 3].map(thoughts),
      "math/train-00001-of-00002.parquet": [4, 5, 6].map(thoughts),
      "code/train-00000-of-00001.parquet": [7].map(thoughts),
    },
  };
  for (const [id, files] of Object.entries(datasets)) {
    await writeDatasetDir(await hubSnapshot(hub, "datasets", id), files);
  }
}

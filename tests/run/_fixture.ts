/**
 * Shared fixtures of the run tests: a temp dir holding a tiny from-scratch llama (hidden 16,
 * one layer, char tokenizer over "0123456789+="), train / eval / sft JSONL files of one-digit
 * sums, and config YAML files built from a base object with overrides.
 */

import { stringify } from "yaml";
import { type MetricsRow, readMetrics } from "../../src/monitor/metrics_log.ts";
import { tinyLlamaConfig } from "../_tiny_llama.ts";

export { pathExists as exists } from "../../src/util/path_exists.ts";

/** A fixture directory. */
export interface Fixture {
  dir: string;
  /** Writes `<dir>/<name>` from the base config merged with `overrides`; returns its path. */
  writeConfig(overrides?: Record<string, unknown>, name?: string): Promise<string>;
  /** `<dir>/runs/t/<name>`: the run directory of a run named `name`. */
  runDir(name: string): string;
  remove(): Promise<void>;
}

const MODEL_CONFIG = tinyLlamaConfig(15, { bos_token_id: 1, eos_token_id: 2 });

const TOKENIZER = { type: "char", chars: "0123456789+=", special: ["<pad>", "<bos>", "<eos>"] };

/** `n` rows `{"prompt": "a+b=", "answer": "<a+b>"}` with a, b from a fixed walk. */
function sums(n: number, start: number): string {
  const rows: string[] = [];
  for (let i = 0; i < n; i++) {
    const a = (start + 3 * i) % 10;
    const b = (start + 7 * i + 1) % 10;
    rows.push(JSON.stringify({ prompt: `${a}+${b}=`, answer: String(a + b) }));
  }
  return rows.join("\n") + "\n";
}

/** The keys of a taskset over the fixture's data files: their format, no chat template. */
export const TASKSET_KEYS = {
  format: { prompt_key: "prompt", response_key: "answer" },
  workflow_args: { use_chat_template: false },
};

/** The base config (mode both, grpo, 2 tasks x 2 rollouts per step, 3 steps). */
export function baseConfig(name: string): Record<string, unknown> {
  return {
    project: "t",
    name,
    checkpoint_root_dir: "./runs",
    model: {
      model_path: "./model",
      from_scratch: true,
      max_prompt_tokens: 8,
      max_response_tokens: 3,
    },
    algorithm: { algorithm_type: "grpo", repeat_times: 2, optimizer: { lr: 0.01 } },
    buffer: {
      batch_size: 2,
      total_steps: 3,
      explorer_input: {
        default_workflow_type: "simple_workflow",
        default_reward_fn_type: "exact_match",
        taskset: { path: "./data/train.jsonl", ...TASKSET_KEYS },
        eval_tasksets: [
          {
            name: "held_out",
            path: "./data/eval.jsonl",
            rollout_args: { temperature: 0 },
            ...TASKSET_KEYS,
          },
        ],
      },
      trainer_input: {
        sft_warmup_dataset: {
          path: "./data/sft.jsonl",
          format: { prompt_key: "prompt", response_key: "answer" },
        },
      },
    },
    explorer: { eval_interval: 0 },
    trainer: { save_interval: 1 },
    monitor: { tensorboard: false, console: false },
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `base` with `over` merged in (objects recursively; arrays and scalars replace; null deletes). */
export function merge(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === null) delete out[key];
    else if (isObject(value) && isObject(out[key])) {
      out[key] = merge(out[key] as Record<string, unknown>, value);
    } else out[key] = value;
  }
  return out;
}

/** Creates a fixture directory (see the file comment). */
export async function makeFixture(): Promise<Fixture> {
  const dir = await Deno.makeTempDir({ prefix: "rft-run-" });
  await Deno.mkdir(`${dir}/model`);
  await Deno.mkdir(`${dir}/data`);
  await Deno.writeTextFile(`${dir}/model/config.json`, JSON.stringify(MODEL_CONFIG));
  await Deno.writeTextFile(`${dir}/model/char_tokenizer.json`, JSON.stringify(TOKENIZER));
  await Deno.writeTextFile(`${dir}/data/train.jsonl`, sums(24, 0));
  await Deno.writeTextFile(`${dir}/data/eval.jsonl`, sums(3, 5));
  await Deno.writeTextFile(`${dir}/data/sft.jsonl`, sums(48, 2));
  return {
    dir,
    async writeConfig(overrides = {}, name = "config.yaml") {
      const runName = typeof overrides.name === "string"
        ? overrides.name
        : name.replace(/\..*/, "");
      const path = `${dir}/${name}`;
      await Deno.writeTextFile(path, stringify(merge(baseConfig(runName), overrides)));
      return path;
    },
    runDir: (name) => `${dir}/runs/t/${name}`,
    remove: () => Deno.remove(dir, { recursive: true }),
  };
}

/** The rows of `<runDir>/metrics.jsonl` (fails on an unreadable line). */
export async function metricsRows(runDir: string): Promise<MetricsRow[]> {
  const { rows, unreadable } = await readMetrics(`${runDir}/metrics.jsonl`);
  if (unreadable) throw new Error(`${runDir}/metrics.jsonl: ${unreadable} unreadable lines`);
  return rows;
}

/** The train rows (those with `actor/loss`), in file order. */
export function trainRows(rows: readonly MetricsRow[]): MetricsRow[] {
  return rows.filter((r) => "actor/loss" in r);
}

/** The steps of `checkpoints/step_N` directories under `dir`, ascending. */
export async function checkpointSteps(dir: string): Promise<number[]> {
  const steps: number[] = [];
  for await (const e of Deno.readDir(`${dir}/checkpoints`)) {
    const m = /^step_(\d+)$/.exec(e.name);
    if (e.isDirectory && m) steps.push(Number(m[1]));
  }
  return steps.sort((a, b) => a - b);
}

/** A JSON file's contents. */
export async function readJson<T = Record<string, unknown>>(path: string): Promise<T> {
  return JSON.parse(await Deno.readTextFile(path)) as T;
}

/** Run options that keep the run's log out of the test output. */
export const quiet = { log: () => {} };

/** Runs `fn` on a fresh fixture and removes it afterwards. */
export async function withFixture(fn: (f: Fixture) => Promise<void>): Promise<void> {
  const f = await makeFixture();
  try {
    await fn(f);
  } finally {
    await f.remove();
  }
}

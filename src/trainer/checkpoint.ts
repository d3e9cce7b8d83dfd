/**
 * Trainer checkpoints under `<root>/checkpoints/step_<N>/`: the Hugging Face model directory
 * (with PEFT's adapter files beside it when the model trains a LoRA adapter), the AdamW moments (`optimizer.safetensors`, PyTorch's exp_avg / exp_avg_sq names),
 * `trainer_state.json` and, for PPO, the critic (`critic/`: its `model.safetensors` with the
 * trunk's HF names plus `score.weight`, and its own `optimizer.safetensors`). Each is written
 * into a temporary directory and renamed into place when complete; `latest_checkpoint.txt` names
 * the newest. One writer per root at a time. Moments of a weight stored in row shards keep the
 * shard names (`<name>#<k>.exp_avg`), so a resume needs the same sharding.
 */

import type { GpuContext } from "../gpu/device.ts";
import { shapeSize } from "../graph/tensor.ts";
import { loadModel, type PolicyModel } from "../model/policy.ts";
import { type F32Tensor, SafetensorsFile, writeSafetensors } from "../model/safetensors.ts";
import { pathExists } from "../util/path_exists.ts";
import { writeAtomic } from "../util/write_atomic.ts";
import type { AdamW, AdamWState } from "./adamw.ts";
import { criticParameterSpecs, type CriticStep } from "./critic.ts";
import type { TrainStep } from "./train_step.ts";

/** The folder under the root that holds the checkpoints. */
export const CHECKPOINTS_DIR = "checkpoints";
/** File in {@link CHECKPOINTS_DIR} naming the newest checkpoint directory. */
export const LATEST_FILE = "latest_checkpoint.txt";
/** The optimizer moments inside a checkpoint directory. */
export const OPTIMIZER_FILE = "optimizer.safetensors";
/** The trainer state inside a checkpoint directory; written last, so it marks a complete one. */
export const TRAINER_STATE_FILE = "trainer_state.json";
/** The critic's folder inside a checkpoint directory. */
const CRITIC_DIR = "critic";
/** The critic's parameters inside {@link CRITIC_DIR}. */
const CRITIC_WEIGHTS_FILE = "model.safetensors";

const STEP_DIR = /^step_(\d+)$/;
const TEMP_DIR = /\.tmp-/;
const FIRST_MOMENT = ".exp_avg";
const SECOND_MOMENT = ".exp_avg_sq";

/** Contents of `trainer_state.json`: the caller's extra fields plus the two step counts. */
export interface TrainerState extends Record<string, unknown> {
  /** The training step the checkpoint was taken at (the `N` of `step_N`). */
  step: number;
  /** AdamW steps taken (the t of its bias corrections). */
  optimizer_step: number;
  /** The critic's AdamW steps, when the checkpoint holds a critic. */
  critic_optimizer_step?: number;
}

/** Options of {@link saveCheckpoint}. */
export interface SaveCheckpointOptions {
  /** Keep at most this many complete checkpoints, deleting the oldest (default: keep all). */
  maxToKeep?: number;
  /** A PPO critic to save beside the policy (under `critic/`). */
  critic?: CriticStep;
}

/** What {@link loadCheckpoint} returns. */
export interface LoadedCheckpoint {
  /** The saved model, on the GPU. */
  model: PolicyModel;
  /** For `AdamW.loadState` of a TrainStep built on `model`. */
  optimizerState: AdamWState;
  /** `trainer_state.json` as saved. */
  trainerState: TrainerState;
}

/**
 * Saves `trainStep`'s model and optimizer at training step `step` as
 * `<root>/checkpoints/step_<step>/` and returns that path. `extra` (JSON) is merged into
 * `trainer_state.json` beside `step` and `optimizer_step`. The directory is written under a
 * temporary name and renamed when complete (replacing an earlier save of the same step); then
 * `latest_checkpoint.txt` is updated atomically, the oldest complete checkpoints beyond
 * `maxToKeep` are deleted (never the one just written), and temporary directories left by a
 * crashed save are removed. When to save is the caller's choice, e.g. with a `save_interval`
 * setting: `if (step % saveInterval === 0 || step === totalSteps) await saveCheckpoint(...)`.
 */
export async function saveCheckpoint(
  root: string,
  step: number,
  trainStep: TrainStep,
  extra: Record<string, unknown> = {},
  options: SaveCheckpointOptions = {},
): Promise<string> {
  const { maxToKeep, critic } = options;
  if (!Number.isSafeInteger(step) || step < 0) {
    throw new Error(`Cannot save checkpoint in ${root}: expected a step >= 0, received ${step}`);
  }
  if (maxToKeep !== undefined && !(Number.isSafeInteger(maxToKeep) && maxToKeep >= 1)) {
    throw new Error(
      `Cannot save checkpoint in ${root}: expected maxToKeep to be an integer >= 1, received ${maxToKeep}`,
    );
  }
  for (const key of ["step", "optimizer_step", "critic_optimizer_step"]) {
    if (Object.hasOwn(extra, key)) {
      throw new Error(
        `Cannot save checkpoint in ${root}: extra field "${key}" is reserved for the trainer state`,
      );
    }
  }
  const base = `${root}/${CHECKPOINTS_DIR}`;
  await Deno.mkdir(base, { recursive: true });
  await removeTempDirs(base);
  const name = `step_${step}`;
  const final = `${base}/${name}`;
  const temp = `${final}.tmp-${crypto.randomUUID()}`;
  // Under the model's lock, so the parameters and moments are read between two steps (one
  // tensor at a time, as the files are written).
  const state: TrainerState = { ...extra, step, optimizer_step: trainStep.optimizer.stepCount };
  await trainStep.model.gpuLock.run(async () => {
    await trainStep.model.save(temp);
    await writeMoments(`${temp}/${OPTIMIZER_FILE}`, trainStep.optimizer);
  });
  if (critic) state.critic_optimizer_step = await saveCritic(`${temp}/${CRITIC_DIR}`, critic);
  await writeAtomic(`${temp}/${TRAINER_STATE_FILE}`, JSON.stringify(state, null, 2) + "\n");
  if (await pathExists(final)) {
    // Move the earlier save aside first: a directory cannot be renamed over a non-empty one.
    const old = `${final}.tmp-${crypto.randomUUID()}`;
    await Deno.rename(final, old);
    await Deno.rename(temp, final);
    await Deno.remove(old, { recursive: true });
  } else {
    await Deno.rename(temp, final);
  }
  await writeAtomic(`${base}/${LATEST_FILE}`, name + "\n");
  if (maxToKeep !== undefined) {
    const older = (await completeCheckpoints(base)).filter((c) => c.name !== name);
    for (const c of older.slice(0, Math.max(0, older.length - (maxToKeep - 1)))) {
      await Deno.remove(`${base}/${c.name}`, { recursive: true });
    }
  }
  return final;
}

/**
 * Writes `optimizer`'s moments as `<name>.exp_avg` / `.exp_avg_sq`, each read back from the GPU
 * when the writer reaches it.
 */
async function writeMoments(path: string, optimizer: AdamW): Promise<void> {
  const tensors: F32Tensor[] = optimizer.params.flatMap((p, i) => {
    const read = (which: "m" | "v") => () => optimizer.momentPieces(i, which);
    return [
      { name: p.name + FIRST_MOMENT, shape: p.shape, data: read("m") },
      { name: p.name + SECOND_MOMENT, shape: p.shape, data: read("v") },
    ];
  });
  await writeSafetensors(path, tensors);
}

/** Writes the critic's parameters and moments into `dir`; returns its AdamW step count. */
async function saveCritic(dir: string, critic: CriticStep): Promise<number> {
  await Deno.mkdir(dir, { recursive: true });
  // Under the critic's lock, so its weights and moments are read between two of its steps.
  await critic.critic.gpuLock.run(async () => {
    const params = await critic.critic.readParameters();
    const tensors = criticParameterSpecs(critic.critic.config).map((spec) => ({
      name: spec.name,
      shape: spec.shape,
      data: params.get(spec.name)!,
    }));
    await writeSafetensors(`${dir}/${CRITIC_WEIGHTS_FILE}`, tensors);
    await writeMoments(`${dir}/${OPTIMIZER_FILE}`, critic.optimizer);
  });
  return critic.optimizer.stepCount;
}

/** A critic as a checkpoint holds it: host parameters by name and its AdamW state. */
export interface CriticCheckpoint {
  parameters: Map<string, Float32Array<ArrayBuffer>>;
  optimizerState: AdamWState;
}

/**
 * The critic saved in checkpoint directory `dir`, or undefined when it holds none (a
 * checkpoint of an algorithm without a critic, or of an rft version that did not save it).
 */
export async function loadCriticCheckpoint(dir: string): Promise<CriticCheckpoint | undefined> {
  const criticDir = `${dir}/${CRITIC_DIR}`;
  if (!await pathExists(`${criticDir}/${CRITIC_WEIGHTS_FILE}`)) return undefined;
  const trainerState = await readTrainerState(`${dir}/${TRAINER_STATE_FILE}`);
  const step = trainerState.critic_optimizer_step;
  if (!Number.isSafeInteger(step) || (step as number) < 0) {
    throw new Error(
      `Cannot load the critic of ${dir}: expected "critic_optimizer_step" in ${TRAINER_STATE_FILE} to be an integer >= 0, found ${
        JSON.stringify(step)
      }`,
    );
  }
  const file = await SafetensorsFile.open(`${criticDir}/${CRITIC_WEIGHTS_FILE}`);
  const parameters = new Map<string, Float32Array<ArrayBuffer>>();
  for (const info of file.tensors.values()) {
    if (info.dtype !== "F32") {
      throw new Error(
        `Cannot load the critic of ${dir}: tensor "${info.name}" is ${info.dtype}, expected F32`,
      );
    }
    parameters.set(info.name, new Float32Array((await file.read(info.name)).buffer));
  }
  const moments = await readMoments(`${criticDir}/${OPTIMIZER_FILE}`);
  return { parameters, optimizerState: { step: step as number, moments } };
}

/**
 * The path of the newest complete checkpoint under `<root>/checkpoints/`: the one
 * `latest_checkpoint.txt` names when that is complete, else the highest `step_N` holding
 * `trainer_state.json`; undefined when there is none. Temporary directories are ignored.
 */
export async function findLatestCheckpoint(root: string): Promise<string | undefined> {
  const base = `${root}/${CHECKPOINTS_DIR}`;
  let named: string | undefined;
  try {
    named = (await Deno.readTextFile(`${base}/${LATEST_FILE}`)).trim();
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  if (named && STEP_DIR.test(named) && await pathExists(`${base}/${named}/${TRAINER_STATE_FILE}`)) {
    return `${base}/${named}`;
  }
  const all = await completeCheckpoints(base);
  return all.length ? `${base}/${all[all.length - 1].name}` : undefined;
}

/**
 * Loads checkpoint directory `dir` (from {@link saveCheckpoint}): the model (`loadModel`, with
 * the LoRA adapter it holds attached to train on), the optimizer state for `AdamW.loadState`,
 * and the trainer state.
 */
export async function loadCheckpoint(
  dir: string,
  options: { gpu?: GpuContext } = {},
): Promise<LoadedCheckpoint> {
  const trainerState = await readTrainerState(`${dir}/${TRAINER_STATE_FILE}`);
  const moments = await readMoments(`${dir}/${OPTIMIZER_FILE}`);
  const model = await loadModel(dir, { ...options, adapter: "attach" });
  return {
    model,
    optimizerState: { step: trainerState.optimizer_step, moments },
    trainerState,
  };
}

async function readTrainerState(path: string): Promise<TrainerState> {
  let state: unknown;
  try {
    state = JSON.parse(await Deno.readTextFile(path));
  } catch (err) {
    throw new Error(`Cannot load checkpoint state ${path}: ${(err as Error).message}`);
  }
  if (typeof state !== "object" || state === null || Array.isArray(state)) {
    throw new Error(
      `Cannot load checkpoint state ${path}: expected a JSON object, found ${
        JSON.stringify(state)
      }`,
    );
  }
  const record = state as Record<string, unknown>;
  for (const key of ["step", "optimizer_step"]) {
    const value = record[key];
    if (!Number.isSafeInteger(value) || (value as number) < 0) {
      throw new Error(
        `Cannot load checkpoint state ${path}: expected "${key}" to be an integer >= 0, found ${
          JSON.stringify(value)
        }`,
      );
    }
  }
  return record as TrainerState;
}

async function readMoments(path: string): Promise<AdamWState["moments"]> {
  const file = await SafetensorsFile.open(path);
  const moments: AdamWState["moments"] = new Map();
  for (const info of file.tensors.values()) {
    if (info.dtype !== "F32") {
      throw new Error(
        `Cannot load optimizer state ${path}: tensor "${info.name}" is ${info.dtype}, expected F32`,
      );
    }
    if (!info.name.endsWith(FIRST_MOMENT) && !info.name.endsWith(SECOND_MOMENT)) {
      throw new Error(
        `Cannot load optimizer state ${path}: tensor "${info.name}" ends in neither "${FIRST_MOMENT}" nor "${SECOND_MOMENT}"`,
      );
    }
  }
  for (const info of file.tensors.values()) {
    if (!info.name.endsWith(FIRST_MOMENT)) continue;
    const param = info.name.slice(0, -FIRST_MOMENT.length);
    const second = file.tensors.get(param + SECOND_MOMENT);
    if (!second || shapeSize(second.shape) !== shapeSize(info.shape)) {
      throw new Error(
        `Cannot load optimizer state ${path}: expected "${param}${SECOND_MOMENT}" of ${
          shapeSize(info.shape)
        } values beside "${info.name}", found ${second ? shapeSize(second.shape) : "none"}`,
      );
    }
    const m = new Float32Array((await file.read(info.name)).buffer);
    const v = new Float32Array((await file.read(second.name)).buffer);
    moments.set(param, { m, v });
  }
  for (const name of file.tensors.keys()) {
    const param = name.slice(0, -SECOND_MOMENT.length);
    if (name.endsWith(SECOND_MOMENT) && !moments.has(param)) {
      throw new Error(
        `Cannot load optimizer state ${path}: expected "${param}${FIRST_MOMENT}" beside "${name}", found none`,
      );
    }
  }
  return moments;
}

/** The complete checkpoints under `<root>/checkpoints/`, oldest first, with their paths. */
export async function listCheckpoints(root: string): Promise<{ dir: string; step: number }[]> {
  const base = `${root}/${CHECKPOINTS_DIR}`;
  return (await completeCheckpoints(base)).map((c) => ({ dir: `${base}/${c.name}`, step: c.step }));
}

async function completeCheckpoints(base: string): Promise<{ name: string; step: number }[]> {
  const found: { name: string; step: number }[] = [];
  try {
    for await (const entry of Deno.readDir(base)) {
      const match = STEP_DIR.exec(entry.name);
      if (!entry.isDirectory || !match) continue;
      if (await pathExists(`${base}/${entry.name}/${TRAINER_STATE_FILE}`)) {
        found.push({ name: entry.name, step: Number(match[1]) });
      }
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
  return found.sort((a, b) => a.step - b.step);
}

/** Removes the temporary directories a crashed save left in `base`. */
async function removeTempDirs(base: string): Promise<void> {
  for await (const entry of Deno.readDir(base)) {
    if (entry.isDirectory && TEMP_DIR.test(entry.name)) {
      await Deno.remove(`${base}/${entry.name}`, { recursive: true });
    }
  }
}

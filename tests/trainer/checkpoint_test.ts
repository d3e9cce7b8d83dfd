/**
 * Trainer checkpoints: resuming from a checkpoint reproduces uninterrupted training exactly (the
 * policy's and a PPO critic's),
 * `maxToKeep` prunes the oldest, and temporary or incomplete directories are never taken for a
 * checkpoint (and temporary ones are cleaned by the next save).
 */

import { assertEquals } from "../_asserts.ts";
import { type Experience, newEid, validateExperience } from "../../src/buffer/experience.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { createModel, type PolicyModel } from "../../src/model/policy.ts";
import {
  CHECKPOINTS_DIR,
  findLatestCheckpoint,
  LATEST_FILE,
  loadCheckpoint,
  loadCriticCheckpoint,
  saveCheckpoint,
  TRAINER_STATE_FILE,
} from "../../src/trainer/checkpoint.ts";
import { TrainStep, type TrainStepConfig } from "../../src/trainer/train_step.ts";
import { createCritic, CriticStep } from "../../src/trainer/critic.ts";
import { TINY_QWEN2 } from "./_tiny_qwen2.ts";
import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";
import { configure } from "../../src/util/registry.ts";

const RAW = TINY_QWEN2;
const PROMPT = [1, 2, 3];
const CONFIG: TrainStepConfig = {
  policyLoss: configure(POLICY_LOSS_FN, "sft"),
  optimizer: { lr: 0.01, weightDecay: 0.01 },
  gradClip: 1,
};

async function tinyModel(): Promise<PolicyModel> {
  return await createModel(RAW, initParameters(parseHfConfig(RAW), 5, 0.3));
}

/** SFT experiences of a few responses after PROMPT. */
function dataset(): Experience[] {
  return [[4, 5, 6, 7], [4, 5, 6, 8], [9, 10, 11, 12]].map((response, runId) => {
    const tokens = [...PROMPT, ...response];
    const exp: Experience = {
      tokens,
      promptLength: PROMPT.length,
      actionMask: tokens.map((_, t) => (t >= PROMPT.length ? 1 : 0)),
      logprobs: tokens.map(() => 0),
      reward: 0,
      info: { taskId: "t0", runId, policyVersion: 0, eid: newEid("t0", runId) },
    };
    validateExperience(exp, "test");
    return exp;
  });
}

/** Parameters whose values differ bit-for-bit between `a` and `b`. */
function differing(
  a: Map<string, Float32Array<ArrayBuffer>>,
  b: Map<string, Float32Array<ArrayBuffer>>,
): string[] {
  assertEquals([...a.keys()].sort(), [...b.keys()].sort());
  return [...a].filter(([name, x]) => {
    const y = b.get(name)!;
    const bits = (t: Float32Array<ArrayBuffer>) =>
      new Uint32Array(t.buffer, t.byteOffset, t.length);
    return x.length !== y.length || bits(x).some((u, i) => u !== bits(y)[i]);
  }).map(([name]) => name);
}

async function stepDirs(root: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(`${root}/${CHECKPOINTS_DIR}`)) names.push(e.name);
  return names.sort();
}

Deno.test("resuming from a checkpoint reproduces uninterrupted training bit for bit", async () => {
  const root = await Deno.makeTempDir({ prefix: "rft-checkpoint-" });
  const exps = dataset();
  const model = await tinyModel();
  const trainer = new TrainStep(model, CONFIG);
  for (let i = 0; i < 2; i++) await trainer.step(exps);
  const dir = await saveCheckpoint(root, 2, trainer, { epoch: 0, note: "x" });
  assertEquals(dir, `${root}/${CHECKPOINTS_DIR}/step_2`);
  assertEquals(await findLatestCheckpoint(root), dir);
  const original: number[] = [];
  for (let i = 0; i < 2; i++) original.push((await trainer.step(exps)).loss);
  const p1 = await model.readParameters();

  const loaded = await loadCheckpoint(dir, { gpu: model.gpu });
  assertEquals(loaded.trainerState, { epoch: 0, note: "x", step: 2, optimizer_step: 2 });
  const resumed = new TrainStep(loaded.model, CONFIG);
  resumed.optimizer.loadState(loaded.optimizerState);
  const again: number[] = [];
  for (let i = 0; i < 2; i++) again.push((await resumed.step(exps)).loss);
  const p2 = await loaded.model.readParameters();

  // Same inputs, same kernels, same f32 state (parameters, moments, step count and so lr and
  // bias corrections): the GPU computes the same bits.
  assertEquals(again, original);
  assertEquals(differing(p1, p2), []);
  // The 2 steps after the save did move the parameters away from the checkpoint.
  const saved = await loadCheckpoint(dir, { gpu: model.gpu });
  assertEquals(differing(p1, await saved.model.readParameters()).length > 0, true);
  for (const t of [trainer, resumed]) t.destroy();
  for (const m of [model, loaded.model, saved.model]) m.destroy();
  await Deno.remove(root, { recursive: true });
});

Deno.test("a critic saved with a checkpoint resumes its training bit for bit", async () => {
  const root = await Deno.makeTempDir({ prefix: "rft-checkpoint-" });
  const exps = dataset().map((e, i) => ({
    ...e,
    returns: e.tokens.map((_, t) => (i - 1) * t / 4),
  }));
  const tokens = exps.map((e) => e.tokens);
  const model = await tinyModel();
  const trainer = new TrainStep(model, CONFIG);
  const config = { optimizer: { lr: 0.02, weightDecay: 0.01 }, gradClip: 1 };
  const critic = new CriticStep(
    await createCritic(RAW, initParameters(parseHfConfig(RAW), 9, 0.3), { gpu: model.gpu }),
    config,
  );
  for (let i = 0; i < 2; i++) await critic.step(exps, await critic.critic.values(tokens));
  const plain = await saveCheckpoint(root, 1, trainer);
  assertEquals(await loadCriticCheckpoint(plain), undefined);
  const dir = await saveCheckpoint(root, 2, trainer, {}, { critic });
  const after = await critic.step(exps, await critic.critic.values(tokens));
  const p1 = await critic.critic.readParameters();

  const saved = (await loadCriticCheckpoint(dir))!;
  assertEquals(saved.optimizerState.step, 2);
  assertEquals(
    (await loadCheckpoint(dir, { gpu: model.gpu })).trainerState.critic_optimizer_step,
    2,
  );
  const resumed = new CriticStep(
    await createCritic(RAW, saved.parameters, { gpu: model.gpu }),
    config,
  );
  resumed.optimizer.loadState(saved.optimizerState);
  const again = await resumed.step(exps, await resumed.critic.values(tokens));
  assertEquals(again, after);
  assertEquals(differing(p1, await resumed.critic.readParameters()), []);
  // The value head was trained (a fresh critic's is zero) and saved with it.
  assertEquals(saved.parameters.get("score.weight")!.some((x) => x !== 0), true);
  for (const c of [critic, resumed]) {
    c.destroy();
    c.critic.destroy();
  }
  trainer.destroy();
  model.destroy();
  await Deno.remove(root, { recursive: true });
});

Deno.test("maxToKeep, stray temporary and incomplete directories", async () => {
  const root = await Deno.makeTempDir({ prefix: "rft-checkpoint-" });
  const base = `${root}/${CHECKPOINTS_DIR}`;
  const exps = dataset();
  const model = await tinyModel();
  const trainer = new TrainStep(model, CONFIG);
  assertEquals(await findLatestCheckpoint(root), undefined);
  for (const step of [1, 2, 3]) {
    await trainer.step(exps);
    await saveCheckpoint(root, step, trainer, {}, { maxToKeep: 2 });
  }
  assertEquals(await stepDirs(root), [LATEST_FILE, "step_2", "step_3"]);
  assertEquals(await findLatestCheckpoint(root), `${base}/step_3`);

  // A crashed save of a later step: a higher-numbered temporary directory, complete-looking.
  await Deno.mkdir(`${base}/step_9.tmp-x`);
  await Deno.writeTextFile(`${base}/step_9.tmp-x/${TRAINER_STATE_FILE}`, "{}");
  // A step directory without trainer_state.json is not complete.
  await Deno.mkdir(`${base}/step_7`);
  await Deno.writeTextFile(`${base}/step_7/config.json`, "{}");
  assertEquals(await findLatestCheckpoint(root), `${base}/step_3`);
  // Without latest_checkpoint.txt, the highest complete step_N wins.
  await Deno.remove(`${base}/${LATEST_FILE}`);
  assertEquals(await findLatestCheckpoint(root), `${base}/step_3`);
  // latest_checkpoint.txt naming an incomplete directory falls back the same way.
  await Deno.writeTextFile(`${base}/${LATEST_FILE}`, "step_7\n");
  assertEquals(await findLatestCheckpoint(root), `${base}/step_3`);

  await trainer.step(exps);
  await saveCheckpoint(root, 4, trainer, {}, { maxToKeep: 2 });
  assertEquals(await stepDirs(root), [LATEST_FILE, "step_3", "step_4", "step_7"]);
  assertEquals(await findLatestCheckpoint(root), `${base}/step_4`);
  assertEquals((await loadCheckpoint(`${base}/step_4`, { gpu: model.gpu })).trainerState, {
    step: 4,
    optimizer_step: 4,
  });

  // Saving an earlier step again (e.g. after resuming from it) replaces it and is kept.
  await saveCheckpoint(root, 3, trainer, { resumed: true }, { maxToKeep: 1 });
  assertEquals(await stepDirs(root), [LATEST_FILE, "step_3", "step_7"]);
  assertEquals(await findLatestCheckpoint(root), `${base}/step_3`);
  trainer.destroy();
  model.destroy();
  await Deno.remove(root, { recursive: true });
});

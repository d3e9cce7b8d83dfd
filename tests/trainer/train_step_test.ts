import { assertEquals } from "../_asserts.ts";
import { ADVANTAGE_FN } from "../../src/algorithm/advantage/mod.ts";
import { configure } from "../../src/util/registry.ts";
import { type Experience, newEid, validateExperience } from "../../src/buffer/experience.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { createModel, type PolicyModel } from "../../src/model/policy.ts";
import { TrainStep } from "../../src/trainer/train_step.ts";
import { TINY_QWEN2 } from "./_tiny_qwen2.ts";
import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";

const RAW = TINY_QWEN2;
const PROMPT = [1, 2, 3];

async function tinyModel(): Promise<PolicyModel> {
  return await createModel(RAW, initParameters(parseHfConfig(RAW), 5, 0.3));
}

/** An on-policy experience of `response` after PROMPT, with log-probs from `model`. */
async function experience(
  model: PolicyModel,
  response: number[],
  reward: number,
  runId: number,
): Promise<Experience> {
  const tokens = [...PROMPT, ...response];
  const [lp] = await model.logprobs([tokens]);
  const mask = tokens.map((_, t) => (t >= PROMPT.length ? 1 : 0));
  const exp: Experience = {
    tokens,
    promptLength: PROMPT.length,
    actionMask: mask,
    logprobs: tokens.map((_, t) => (t >= PROMPT.length ? lp[t - 1] : 0)),
    reward,
    info: { taskId: "t0", runId, policyVersion: 0, eid: newEid("t0", runId) },
  };
  validateExperience(exp, "test");
  return exp;
}

/** Sum of log p(response | prompt) under `model`. */
async function responseLogprob(model: PolicyModel, response: number[]): Promise<number> {
  const [lp] = await model.logprobs([[...PROMPT, ...response]]);
  return lp.slice(PROMPT.length - 1).reduce((a, b) => a + b, 0);
}

Deno.test("GRPO raises the log-prob of rewarded responses and lowers unrewarded ones", async () => {
  const model = await tinyModel();
  const good = [[4, 5, 6], [4, 5, 9]];
  const bad = [[7, 8, 9], [10, 11, 12]];
  const exps = [
    ...await Promise.all(good.map((r, i) => experience(model, r, 1, i))),
    ...await Promise.all(bad.map((r, i) => experience(model, r, 0, 2 + i))),
  ];
  const { entry, args } = configure(ADVANTAGE_FN, "grpo");
  const adv = entry.compute(
    exps.map((e) => ({ groupId: e.info.taskId, reward: e.reward, actionMask: e.actionMask })),
    args,
  );
  exps.forEach((e, i) => (e.advantages = Array.from(adv.perToken[i])));
  const before = await Promise.all([...good, ...bad].map((r) => responseLogprob(model, r)));
  const trainer = new TrainStep(model, {
    policyLoss: configure(POLICY_LOSS_FN, "ppo"),
    optimizer: { lr: 0.01, weightDecay: 0 },
    gradClip: 1,
  });
  for (let i = 0; i < 3; i++) {
    const metrics = await trainer.step(exps);
    for (const v of Object.values(metrics)) {
      assertEquals(Number.isFinite(v), true, JSON.stringify(metrics));
    }
    // On-policy at the first step: the trainer's log-probs equal the sampler's.
    if (i === 0) {
      assertEquals(Math.abs(metrics.ratio_mean - 1) < 1e-5, true, `ratio ${metrics.ratio_mean}`);
    }
  }
  const after = await Promise.all([...good, ...bad].map((r) => responseLogprob(model, r)));
  for (let i = 0; i < good.length; i++) {
    assertEquals(after[i] > before[i], true, `rewarded ${good[i]}: ${before[i]} -> ${after[i]}`);
  }
  for (let i = good.length; i < after.length; i++) {
    assertEquals(after[i] < before[i], true, `unrewarded: ${before[i]} -> ${after[i]}`);
  }
  trainer.destroy();
  model.destroy();
});

Deno.test("SFT loss falls on a tiny dataset", async () => {
  const model = await tinyModel();
  const data = [[4, 5, 6, 7], [4, 5, 6, 8], [9, 10, 11, 12]];
  const exps = await Promise.all(data.map((r, i) => experience(model, r, 0, i)));
  const trainer = new TrainStep(model, {
    policyLoss: configure(POLICY_LOSS_FN, "sft"),
    optimizer: { lr: 0.01 },
  });
  const losses: number[] = [];
  for (let i = 0; i < 25; i++) losses.push((await trainer.step(exps)).loss);
  assertEquals(losses[24] < 0.5 * losses[0], true, `loss ${losses[0]} -> ${losses[24]}`);
  trainer.destroy();
  model.destroy();
});

Deno.test("DPO increases the chosen-minus-rejected margin over the reference", async () => {
  const model = await tinyModel();
  const pairs = [[[4, 5, 6], [7, 8, 9]], [[4, 5, 9], [10, 11, 12]]];
  const exps: Experience[] = [];
  for (const [i, [chosen, rejected]] of pairs.entries()) {
    for (const [k, response] of [chosen, rejected].entries()) {
      const e = await experience(model, response, k === 0 ? 1 : 0, 2 * i + k);
      e.referenceLogprobs = [...e.logprobs]; // the reference is the starting policy
      exps.push(e);
    }
  }
  const margin = async () => {
    let total = 0;
    for (const [i, [chosen, rejected]] of pairs.entries()) {
      const ref = (e: Experience) => e.referenceLogprobs!.reduce((a, b) => a + b, 0);
      total += (await responseLogprob(model, chosen)) - ref(exps[2 * i]) -
        ((await responseLogprob(model, rejected)) - ref(exps[2 * i + 1]));
    }
    return total / pairs.length;
  };
  const before = await margin();
  const trainer = new TrainStep(model, {
    policyLoss: configure(POLICY_LOSS_FN, "dpo"),
    optimizer: { lr: 0.01 },
  });
  for (let i = 0; i < 5; i++) await trainer.step(exps);
  const after = await margin();
  assertEquals(Math.abs(before) < 1e-4, true, `initial margin ${before}`);
  assertEquals(after > 1, true, `margin ${before} -> ${after}`);
  trainer.destroy();
  model.destroy();
});

import { assertEquals } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { checkGradients } from "../_harness.ts";
import { rows, runLoss, TIGHT } from "../algorithm/_reference.ts";
import { ADVANTAGE_FN } from "../../src/algorithm/advantage/mod.ts";
import { configure } from "../../src/util/registry.ts";
import { type Experience, newEid, validateExperience } from "../../src/buffer/experience.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import { clippedValueLoss, createCritic, CriticStep } from "../../src/trainer/critic.ts";
import { TINY_QWEN2 } from "./_tiny_qwen2.ts";

const CLIP = 0.2;

/**
 * Values, old values, returns and mask [2, 4]: tokens inside the clip, clipped tokens where the
 * clipped loss wins (row 0 t1, row 1 t2) and where the unclipped one does, masked tokens.
 */
const LOSS_CASE = [
  rows([[0.1, 0.9, -0.8, 1.05], [0.1, -0.4, 0.8, 2]]),
  rows([[0, 0.5, -0.3, 1], [0.2, -1, 0.3, 0]]),
  rows([[0.5, 1.6, 0.2, 2], [0, -2, 1.5, 0]]),
  rows([[1, 1, 1, 1], [0, 1, 1, 0]]),
];

/** verl's `compute_value_loss` in f64 (token-mean), with its clip fraction and value mean. */
function valueLossRef(
  v: ArrayLike<number>,
  old: ArrayLike<number>,
  ret: ArrayLike<number>,
  mask: ArrayLike<number>,
) {
  let sum = 0;
  let clipped = 0;
  let vsum = 0;
  let count = 0;
  for (let i = 0; i < v.length; i++) {
    const vc = Math.min(Math.max(v[i], old[i] - CLIP), old[i] + CLIP);
    const l1 = (v[i] - ret[i]) ** 2;
    const l2 = (vc - ret[i]) ** 2;
    sum += Math.max(l1, l2) * mask[i];
    clipped += (l2 > l1 ? 1 : 0) * mask[i];
    vsum += v[i] * mask[i];
    count += mask[i];
  }
  const n = count + 1e-8;
  return { loss: 0.5 * sum / n, vf_clipfrac: clipped / n, vpred_mean: vsum / n };
}

const build = (values: Tensor, oldValues: Tensor, returns: Tensor, mask: Tensor) =>
  clippedValueLoss({ values, oldValues, returns, mask }, CLIP);

Deno.test("clipped value loss matches verl's formula in f64, value and gradient", async () => {
  const data = LOSS_CASE.map((x) => x.data);
  const ref = valueLossRef(data[0], data[1], data[2], data[3]);
  assertClose([ref.vf_clipfrac], [2 / 6], { ...TIGHT, label: "reference clip fraction" });
  const { loss, metrics } = await runLoss(LOSS_CASE, build);
  assertClose([loss, metrics.vf_clipfrac, metrics.vpred_mean], [
    ref.loss,
    ref.vf_clipfrac,
    ref.vpred_mean,
  ], { ...TIGHT, label: "value loss and metrics" });
  await checkGradients({
    label: "clipped value loss",
    inputs: LOSS_CASE,
    wrt: [0],
    build: (...xs) => build(xs[0], xs[1], xs[2], xs[3]).loss,
    reference: (v, old, ret, mask) => [valueLossRef(v, old, ret, mask).loss],
  });
});

const RAW = TINY_QWEN2;

Deno.test("PPO with a critic reduces value loss", async () => {
  const critic = await createCritic(RAW, initParameters(parseHfConfig(RAW), 5, 0.3));
  const samples: [number[], number[], number][] = [
    [[1, 2], [4, 5, 6], 1],
    [[3, 2], [7, 8, 9, 10], -1],
    [[11, 2], [4, 12], 0.5],
  ];
  const exps: Experience[] = samples.map(([prompt, response, reward], i) => {
    const tokens = [...prompt, ...response];
    return validateExperience({
      tokens,
      promptLength: prompt.length,
      actionMask: tokens.map((_, t) => (t >= prompt.length ? 1 : 0)),
      logprobs: tokens.map(() => 0),
      reward,
      info: { taskId: `t${i}`, runId: 0, policyVersion: 0, eid: newEid(`t${i}`, 0) },
    }, "test");
  });
  const tokens = exps.map((e) => e.tokens);
  const initial = await critic.values(tokens);
  // The zero value head predicts 0 everywhere; one value per token.
  assertEquals(initial, tokens.map((t) => t.map(() => 0)));
  const { entry, args } = configure(ADVANTAGE_FN, "ppo", { gamma: 0.9, lam: 1 });
  const gae = entry.compute(
    exps.map((e, i) => ({
      groupId: e.info.taskId,
      reward: e.reward,
      actionMask: e.actionMask,
      values: initial[i],
    })),
    args,
  );
  exps.forEach((e, i) => (e.returns = Array.from(gae.returns[i])));

  const trainer = new CriticStep(critic, {
    optimizer: { lr: 0.02, weightDecay: 0 },
    gradClip: 1,
    cliprangeValue: 0.5,
  });
  const losses: number[] = [];
  for (let i = 0; i < 20; i++) {
    const old = await critic.values(tokens); // as a fresh rollout would record them
    const metrics = await trainer.step(exps, old);
    for (const v of Object.values(metrics)) {
      assertEquals(Number.isFinite(v), true, JSON.stringify(metrics));
    }
    // The step's values are the rollout's: its loss is 0.5 * masked mean of (old - returns)^2.
    let sum = 0;
    let count = 0;
    exps.forEach((e, b) =>
      e.actionMask.forEach((m, t) => {
        sum += m * (old[b][t] - e.returns![t]) ** 2;
        count += m;
      })
    );
    assertClose([metrics.vf_loss], [0.5 * sum / count], {
      atol: 1e-5,
      rtol: 1e-4,
      label: `vf_loss at step ${i}`,
    });
    losses.push(metrics.vf_loss);
  }
  assertEquals(losses[19] < 0.02 * losses[0], true, `vf_loss ${losses[0]} -> ${losses[19]}`);
  trainer.destroy();
  critic.destroy();
});

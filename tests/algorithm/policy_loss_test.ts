/**
 * The other policy losses (opmd, sft, dpo, mix): loss, metrics and gradient on fixed batches
 * against arithmetic done by hand in the comments; DPO also at margin 0 (the first step, policy
 * = reference), at a margin far below the sigmoid's range, and with label smoothing against f64
 * finite differences.
 */

import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";
import type { PolicyLossInputs } from "../../src/algorithm/policy_loss/mod.ts";
import { configure } from "../../src/util/registry.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import { assertClose } from "../_assert_close.ts";
import { assertRejects } from "../_asserts.ts";
import { checkGradients, type TestInput } from "../_harness.ts";
import { rows, runLoss, TIGHT, vector } from "./_reference.ts";

/** Runs policy loss `name` over `inputs` given in the order of `names` (logp first). */
function runNamed(
  name: string,
  args: Record<string, unknown>,
  names: (keyof PolicyLossInputs)[],
  inputs: TestInput[],
) {
  const { entry, args: resolved } = configure(POLICY_LOSS_FN, name, args);
  return runLoss(inputs, (...xs: Tensor[]) => {
    const named = Object.fromEntries(names.map((n, i) => [n, xs[i]]));
    return entry.build(named as unknown as PolicyLossInputs, resolved);
  });
}

const LOGP = rows([[-0.5, -1], [-2, -0.25]]);

Deno.test("opmd: mean(-A * logp) / (1 + tau)", async () => {
  // A = [1, -1], tau = 1: (0.5 + 1 - 2 - 0.25) / 4 / 2 = -0.09375;  d/dlogp = -A / 8.
  const result = await runNamed("opmd", {}, ["logp", "advantages", "mask"], [
    LOGP,
    vector([1, -1]),
    rows([[1, 1], [1, 1]]),
  ]);
  assertClose([result.loss, result.metrics.opmd_loss], [-0.09375, -0.09375], TIGHT);
  assertClose(result.grad, [-0.125, -0.125, 0.125, 0.125], { ...TIGHT, label: "grad" });
});

Deno.test("sft: negative log-likelihood, token-mean and seq-mean-token-mean", async () => {
  const mask = rows([[1, 1], [1, 0]]);
  // token-mean: (0.5 + 1 + 2) / 3;  d/dlogp = -1/3 on the 3 tokens.
  const tokenMean = await runNamed("sft", {}, ["logp", "mask"], [LOGP, mask]);
  assertClose([tokenMean.loss], [3.5 / 3], TIGHT);
  assertClose(tokenMean.grad, [-1 / 3, -1 / 3, -1 / 3, 0], { ...TIGHT, label: "token-mean" });
  // seq-mean-token-mean: (0.75 + 2) / 2;  d/dlogp = -1 / (2 rows * tokens of the row).
  const seqMean = await runNamed("sft", { loss_agg_mode: "seq-mean-token-mean" }, [
    "logp",
    "mask",
  ], [LOGP, mask]);
  assertClose([seqMean.loss], [1.375], TIGHT);
  assertClose(seqMean.grad, [-0.25, -0.25, -0.5, 0], { ...TIGHT, label: "seq-mean-token-mean" });
});

Deno.test("dpo: sigmoid loss over (chosen, rejected) row pairs, by hand", async () => {
  // Masked sums of logp - ref: row 0 (chosen) 0.5 + 0.5 = 1;  row 1 (rejected) -0.5 + 0 = -0.5;
  // row 2 (chosen) -1 + 0 = -1;  row 3 (rejected) 1 (its second token masked).
  // beta 0.1: margins 0.1 * 1.5 = 0.15 and 0.1 * -2 = -0.2;
  // loss = (log(1 + e^-0.15) + log(1 + e^0.2)) / 2;
  // d/dlogp = +-beta * (sigmoid(margin) - 1) / 2 pairs = -+0.05 / (1 + e^margin).
  const result = await runNamed("dpo", {}, ["logp", "refLogp", "mask"], [
    rows([[-1, -2], [-1, -1], [-3, -1], [-1, -9]]),
    rows([[-1.5, -2.5], [-0.5, -1], [-2, -1], [-2, 0]]),
    rows([[1, 1], [1, 1], [1, 1], [1, 0]]),
  ]);
  const e = Math.exp;
  assertClose([result.loss], [(Math.log(1 + e(-0.15)) + Math.log(1 + e(0.2))) / 2], TIGHT);
  const g0 = 0.05 / (1 + e(0.15));
  const g1 = 0.05 / (1 + e(-0.2));
  assertClose(result.grad, [-g0, -g0, g0, g0, -g1, -g1, g1, 0], { ...TIGHT, label: "grad" });
  const m = result.metrics;
  // Rewards beta * mean log-ratio: chosen (1 - 1) / 2, rejected (-0.5 + 1) / 2; 1 of 2 right.
  assertClose([m.chosen_reward, m.rejected_reward, m.accuracy_mean], [0, 0.025, 0.5], TIGHT);
});

Deno.test("dpo: margin 0 keeps its gradient; margin -100 stays finite", async () => {
  const names: (keyof PolicyLossInputs)[] = ["logp", "refLogp", "mask"];
  const mask = rows([[1], [1]]);
  // Policy = reference: loss log 2, d/dlogp = -+beta * (1 - sigmoid(0)) = -+0.05.
  const first = await runNamed("dpo", {}, names, [rows([[-1], [-2]]), rows([[-1], [-2]]), mask]);
  assertClose([first.loss], [Math.LN2], TIGHT);
  assertClose(first.grad, [-0.05, 0.05], { ...TIGHT, label: "margin 0" });
  // Margin 0.1 * (-500 - 500) = -100: loss -log(sigmoid(-100)) = 100, gradient -+beta.
  const far = await runNamed("dpo", {}, names, [rows([[-501], [-1]]), rows([[-1], [-501]]), mask]);
  assertClose([far.loss], [100], TIGHT);
  assertClose(far.grad, [-0.1, 0.1], { ...TIGHT, label: "margin -100" });
});

Deno.test("dpo: label smoothing matches f64 finite differences; odd rows are an error", async () => {
  const beta = 0.5;
  const ls = 0.2;
  const softplus = (z: number) => Math.log(1 + Math.exp(z));
  const inputs = [
    rows([[-1, -2, -0.5], [-1.5, -0.2, -3], [-0.7, -0.9, -1.1], [-2, -1, -0.3]]),
    rows([[-1.2, -1.8, -0.4], [-1, -0.5, -2], [-1, -1, -1], [-1.5, -1.5, -0.5]]),
    rows([[1, 1, 0], [1, 1, 1], [1, 1, 1], [0, 1, 1]]),
  ];
  const { entry, args } = configure(POLICY_LOSS_FN, "dpo", { beta, label_smoothing: ls });
  await checkGradients({
    label: "dpo label smoothing",
    inputs,
    wrt: [0],
    build: (logp, refLogp, mask) => entry.build({ logp, refLogp, mask }, args).loss,
    reference: (logp, ref, mask) => {
      const seq = [0, 1, 2, 3].map((b) => {
        let s = 0;
        for (let t = 0; t < 3; t++) s += (logp[b * 3 + t] - ref[b * 3 + t]) * mask[b * 3 + t];
        return s;
      });
      const losses = [0, 1].map((p) => {
        const z = beta * (seq[2 * p] - seq[2 * p + 1]);
        return (1 - ls) * softplus(-z) + ls * softplus(z);
      });
      return [(losses[0] + losses[1]) / 2];
    },
    ...TIGHT,
  });
  await assertRejects(
    () => runNamed("dpo", {}, ["logp", "refLogp", "mask"], [rows([[1]]), rows([[1]]), rows([[1]])]),
    Error,
    'Cannot build policy loss fn "dpo": expected an even number of rows (chosen, rejected pairs), received 1',
  );
});

Deno.test("mix: (1 - mu) * ppo on rollout rows + mu * sft on expert rows", async () => {
  // Row 0 rollout (A 1, ratios 1.1 and 0.9, inside the clip): ppo = (-1.1 - 0.9) / 2 = -1.
  // Row 1 expert: sft = (2 + 0.25) / 2 = 1.125.  mu 0.1: 0.9 * -1 + 0.1 * 1.125 = -0.7875.
  // d/dlogp: row 0 0.9 * -A r / 2 = [-0.495, -0.405]; row 1 0.1 * -1/2 = -0.05.
  const old = rows([[-0.5 - Math.log(1.1), -1 - Math.log(0.9)], [0, 0]]);
  const result = await runNamed(
    "mix",
    {},
    ["logp", "oldLogp", "advantages", "mask", "isExpert"],
    [LOGP, old, vector([1, 5]), rows([[1, 1], [1, 1]]), vector([0, 1])],
  );
  assertClose([result.loss], [-0.7875], TIGHT);
  assertClose(result.grad, [-0.495, -0.405, -0.05, -0.05], { ...TIGHT, label: "grad" });
  const m = result.metrics;
  assertClose([m.loss, m["usual/pg_loss"], m["expert/sft_loss"]], [-0.7875, -1, 1.125], TIGHT);
});

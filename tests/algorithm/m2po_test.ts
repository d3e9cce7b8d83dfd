/**
 * M2PO (Trinity's `m2po` policy loss): the mini-batch mask of the paper's Algorithm 1 on a
 * hand-worked batch, and the loss `-A * r` over the kept tokens with the token-mean over every
 * action token, its gradient against arithmetic done by hand.
 */

import { m2poMask } from "../../src/algorithm/policy_loss/m2po.ts";
import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";
import { configure } from "../../src/util/registry.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { oldFor, rows, runPolicyLoss, TIGHT } from "./_reference.ts";

/** One mini-batch: log-ratios [[0.5, 0.1, -0.3], [-0.4, 0.2, 0.05]], last token of row 1 padding. */
const BATCH = [
  { logRatios: [0.5, 0.1, -0.3], advantages: [1, 1, 1], mask: [1, 1, 1] },
  { logRatios: [-0.4, 0.2, 0.05], advantages: [-1, -1, -1], mask: [1, 1, 0] },
].map((r) => ({
  logprobs: r.logRatios.map((x) => x - 1),
  oldLogprobs: r.logRatios.map(() => -1),
  advantages: r.advantages,
  mask: r.mask,
}));

Deno.test("m2po mask: drops the largest squared log-ratios of the clip-active tokens until their mean is within the bound", () => {
  // Clip-active (A > 0 and log r > 0, or A < 0 and log r < 0): 0.5, 0.1 (row 0), -0.4 (row 1);
  // squared 0.25, 0.01, 0.16, mean 0.14. Sorted 0.01, 0.16, 0.25: prefix means 0.01, 0.085,
  // 0.14; with the bound 0.1 the first two stay and 0.25 (row 0, token 0) goes.
  const { mask, metrics } = m2poMask(BATCH, 0.1);
  assertEquals(mask, [[0, 1, 1], [1, 1, 0]]);
  assertClose(
    [metrics.m2_before, metrics.m2_after, metrics.masked_fraction, metrics.trust_region_fraction],
    [0.14, 0.085, 1 / 5, 3 / 5],
    { ...TIGHT, label: "metrics" },
  );
  // Within the bound nothing goes; a bound of 0 drops every clip-active token.
  assertEquals(m2poMask(BATCH, 0.2).mask, [[1, 1, 1], [1, 1, 0]]);
  assertEquals(m2poMask(BATCH, 0).mask, [[0, 0, 1], [0, 1, 0]]);
  const broken = [{ ...BATCH[0], logprobs: [NaN, 0, 0] }];
  assertThrows(() => m2poMask(broken, 0.1), Error, "non-finite log-probability ratio");
});

Deno.test("m2po: the trainer's rewrite zeroes the dropped tokens' advantages; loss -A r over all action tokens", async () => {
  const { entry, args } = configure(POLICY_LOSS_FN, "m2po", { m2_threshold: 0.1 });
  const { advantages, metrics } = entry.miniBatchAdvantages!(args, BATCH);
  assertEquals(advantages, [[0, 1, 1], [-1, -1, 0]]);
  assertClose([metrics.masked_fraction], [0.2], { ...TIGHT, label: "masked" });

  // The loss over those advantages: -sum(A r) / 5 (row 1's padding out of the denominator);
  // d/dlogp = -A r / 5 per kept token.
  const logp = BATCH.map((r) => r.logprobs);
  const ratios = BATCH.map((r) => r.logprobs.map((l, t) => Math.exp(l - r.oldLogprobs[t])));
  const inputs = [
    rows(logp),
    oldFor(logp, ratios),
    rows(advantages),
    rows(BATCH.map((r) => r.mask)),
  ];
  const result = await runPolicyLoss("m2po", { m2_threshold: 0.1 }, inputs);
  const flatA = advantages.flat();
  const flatR = ratios.flat();
  const flatM = BATCH.flatMap((r) => r.mask);
  const terms = flatA.map((a, i) => -a * flatR[i] * flatM[i]);
  assertClose([result.loss], [terms.reduce((s, x) => s + x) / 5], { ...TIGHT, label: "loss" });
  assertClose(result.grad, terms.map((x) => x / 5), { ...TIGHT, label: "grad" });
  // The log-ratio is clamped to +-log_ratio_clip in the value only: the gradient stays r-scaled.
  const far = await runPolicyLoss("m2po", { log_ratio_clip: 0.2 }, [
    rows([[0.5]]),
    rows([[0]]),
    rows([[1]]),
    rows([[1]]),
  ]);
  assertClose([far.loss, far.grad[0]], [-Math.exp(0.2), -Math.exp(0.2)], {
    ...TIGHT,
    label: "clamped",
  });
  assertThrows(
    () => entry.miniBatchAdvantages!({ ...args, loss_agg_mode: "seq-mean-token-mean" }, BATCH),
    Error,
    '"loss_agg_mode" expected "token-mean"',
  );
});

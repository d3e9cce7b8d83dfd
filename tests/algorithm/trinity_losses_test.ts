/**
 * The policy losses of Trinity's registry beyond PPO's family: topr, sppo, rec (each clip mode,
 * weight and regularizer), importance_sampling, sft_is, sft_phi, mix and mix_chord (mu
 * schedule): loss, metrics and gradient on fixed batches against arithmetic done by hand in the
 * comments, and gradients on random batches against f64 finite differences.
 */

import { configure } from "../../src/util/registry.ts";
import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";
import { chordMu } from "../../src/algorithm/policy_loss/mix_chord.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { checkGradients, randomInput } from "../_harness.ts";
import { aggregateRef, oldFor, rows, runLoss, runPolicyLoss, TIGHT, vector } from "./_reference.ts";

const LOGP = [[-0.5, -1.0], [-2.0, -0.25]];
const ALL = rows([[1, 1], [1, 1]]);

Deno.test("topr: negative examples tapered by clip(r, 0, 1), positive ones plain", async () => {
  // A = [1, -2]. Row 0 (A 1 > 0): alpha 1 -> -1 * logp.  Row 1 (A -2 <= 0): alpha = clip(r):
  // r 0.5 -> 0.5, r 3 -> 1.  loss = (0.5 + 1 + 2 * 0.5 * -2 + 2 * 1 * -0.25) / 4.
  const inputs = [rows(LOGP), oldFor(LOGP, [[1.5, 0.7], [0.5, 3]]), vector([1, -2]), ALL];
  const result = await runPolicyLoss("topr", {}, inputs);
  assertClose([result.loss], [(0.5 + 1 - 2 - 0.5) / 4], { ...TIGHT, label: "loss" });
  assertClose(result.grad, [-1 / 4, -1 / 4, 1 / 4, 2 / 4], { ...TIGHT, label: "grad" });
  assertClose([result.metrics.avg_alpha, result.metrics.avg_ratio], [3.5 / 4, 5.7 / 4], {
    ...TIGHT,
    label: "metrics",
  });
  // A threshold of 1.5 tapers row 0 too: r 1.5 -> 1, r 0.7 -> 0.7.
  const raised = await runPolicyLoss("topr", { advantage_threshold: 1.5 }, inputs);
  assertClose(raised.grad, [-1 / 4, -0.7 / 4, 1 / 4, 2 / 4], { ...TIGHT, label: "threshold" });
});

Deno.test("sppo: -A * log-ratio on tokens whose ratio is within [1/(1+eps), 1+eps]", async () => {
  // eps 0.3 -> [0.769, 1.3]. Row 0 (A 1): r 1.2 in, r 1.5 out.  Row 1 (A -1): r 0.9 in, r 0.5 out.
  // loss = (-log 1.2 + log 0.9) / 4; d/dlogp = -A / 4 where in range.
  const inputs = [rows(LOGP), oldFor(LOGP, [[1.2, 1.5], [0.9, 0.5]]), vector([1, -1]), ALL];
  const result = await runPolicyLoss("sppo", {}, inputs);
  assertClose([result.loss], [(-Math.log(1.2) + Math.log(0.9)) / 4], { ...TIGHT, label: "loss" });
  assertClose(result.grad, [-1 / 4, 0, 1 / 4, 0], { ...TIGHT, label: "grad" });
  assertClose([result.metrics.pg_clipfrac], [2 / 4], { ...TIGHT, label: "clipfrac" });
  assertThrows(() => configure(POLICY_LOSS_FN, "sppo", { epsilon: "x" }), Error, "epsilon");
});

Deno.test("rec: each clip mode keeps the tokens Trinity keeps", async () => {
  // A = [1, -1]; ratios row 0 [1.1, 1.3], row 1 [0.7, 1.5]; eps 0.2 -> [0.8, 1.2].
  const ratios = [[1.1, 1.3], [0.7, 1.5]];
  const inputs = [rows(LOGP), oldFor(LOGP, ratios), vector([1, -1]), ALL];
  // Kept tokens per mode (row-major); the gradient is -A / 4 on kept tokens.
  const kept: Record<string, number[]> = {
    "none": [1, 1, 1, 1],
    "two-side": [1, 0, 0, 0],
    // A >= 0: r <= 1.2;  A <= 0: r >= 0.8.
    "one-side": [1, 0, 0, 1],
    // ring (eps' low 0.6, high 2): two-side, or A >= 0 with r <= 0.4, or A <= 0 with r >= 3.
    "ring": [1, 0, 0, 0],
  };
  const a = [1, 1, -1, -1];
  for (const [mode, keep] of Object.entries(kept)) {
    const result = await runPolicyLoss("rec", { clip_mode: mode }, inputs);
    const loss = keep.reduce((s, k, i) => s - a[i] * LOGP.flat()[i] * k, 0) / 4;
    assertClose([result.loss], [loss], { ...TIGHT, label: `${mode} loss` });
    assertClose(result.grad, keep.map((k, i) => -a[i] * k / 4), { ...TIGHT, label: mode });
    assertClose([result.metrics.pg_clipfrac], [1 - keep.reduce((x, y) => x + y) / 4], {
      ...TIGHT,
      label: `${mode} clipfrac`,
    });
  }
  // gspo-one-side uses the sequence ratio s = exp(mean log-ratio): row 0 s = sqrt(1.43) = 1.196
  // <= 1.2 kept; row 1 s = sqrt(1.05) >= 0.8 kept; the mean is over sequences.
  const gspo = await runPolicyLoss("rec", { clip_mode: "gspo-one-side" }, inputs);
  assertClose(gspo.grad, [-1 / 4, -1 / 4, 1 / 4, 1 / 4], { ...TIGHT, label: "gspo-one-side" });
});

Deno.test("rec: weights and regularizers", async () => {
  const ratios = [[1.1, 1.3], [0.7, 1.5]];
  const inputs = [rows(LOGP), oldFor(LOGP, ratios), vector([1, -1]), ALL];
  // importance_sampling: -A * sg(r) * logp -> gradient -A r / 4.
  const is = await runPolicyLoss("rec", { weight: "importance_sampling" }, inputs);
  assertClose(is.grad, [-1.1 / 4, -1.3 / 4, 0.7 / 4, 1.5 / 4], { ...TIGHT, label: "is" });
  // advantage: A exp(A / temp), temp 2 -> row 0 e^0.5, row 1 -e^-0.5.
  const adv = await runPolicyLoss("rec", { weight: "advantage", temp: 2 }, inputs);
  const [p, n] = [Math.exp(0.5), Math.exp(-0.5)];
  assertClose(adv.grad, [-p / 4, -p / 4, n / 4, n / 4], { ...TIGHT, label: "advantage" });
  // forward-kl: minus coef * logp -> gradient -A/4 - coef/4.
  const fkl = await runPolicyLoss(
    "rec",
    { regularizer: "forward-kl", regularizer_coef: 0.5 },
    inputs,
  );
  assertClose(fkl.grad, [-1.5 / 4, -1.5 / 4, 0.5 / 4, 0.5 / 4], { ...TIGHT, label: "fkl" });
  // k2: plus coef (logp - old)^2 -> gradient -A/4 + 2 coef log r / 4.
  const k2 = await runPolicyLoss("rec", { regularizer: "k2", regularizer_coef: 0.5 }, inputs);
  assertClose(
    k2.grad,
    ratios.flat().map((r, i) => (-[1, 1, -1, -1][i] + Math.log(r)) / 4),
    { ...TIGHT, label: "k2" },
  );
  assertThrows(() => configure(POLICY_LOSS_FN, "rec", { clip_mode: 3 }), Error, "clip_mode");
});

Deno.test("importance_sampling: -A * r, gradient -A r per token", async () => {
  const inputs = [rows(LOGP), oldFor(LOGP, [[1.1, 1.3], [0.7, 1.5]]), vector([1, -1]), ALL];
  const result = await runPolicyLoss("importance_sampling", {}, inputs);
  assertClose([result.loss], [(-1.1 - 1.3 + 0.7 + 1.5) / 4], { ...TIGHT, label: "loss" });
  assertClose(result.grad, [-1.1 / 4, -1.3 / 4, 0.7 / 4, 1.5 / 4], { ...TIGHT, label: "grad" });
  assertClose([result.metrics["ratio/mean"]], [4.6 / 4], { ...TIGHT, label: "ratio" });
});

Deno.test("sft_is and sft_phi: NLL weighted by a detached function of p", async () => {
  const logp = [[-0.5, -1.0, -2.0]];
  const mask = rows([[1, 1, 1]]);
  const build = (name: string, args: Record<string, unknown> = {}) => {
    const { entry, args: resolved } = configure(POLICY_LOSS_FN, name, args);
    return runLoss([rows(logp), mask], (lp, m) => entry.build({ logp: lp, mask: m }, resolved));
  };
  const p = logp[0].map(Math.exp);
  const is = await build("sft_is");
  assertClose([is.loss], [p.reduce((s, x, i) => s - logp[0][i] * x, 0) / 3], TIGHT);
  assertClose(is.grad, p.map((x) => -x / 3), { ...TIGHT, label: "sft_is grad" });
  const phi = await build("sft_phi");
  assertClose(phi.grad, p.map((x) => -x * (1 - x) / 3), { ...TIGHT, label: "sft_phi grad" });
  // cutoff 0.5: log-probs above log 0.5 are capped (no gradient there): only p = e^-0.5 = 0.61.
  const cut = await build("sft_phi", { cutoff_prob: 0.5 });
  assertClose(cut.grad, p.map((x) => (x > 0.5 ? 0 : -x * (1 - x) / 3)), { ...TIGHT, label: "cut" });
  const capped = [Math.log(0.5), -1, -2];
  assertClose([cut.loss], [capped.reduce((s, l, i) => s - l * p[i] * (1 - p[i]), 0) / 3], TIGHT);
});

Deno.test("mix_chord: mu follows Trinity's schedule and mixes PPO and phi-SFT", async () => {
  const args = { mu_warmup_steps: 4, mu_decay_steps: 4, mu_peak: 0.5, mu_valley: 0.1 };
  const resolved = configure(POLICY_LOSS_FN, "mix_chord", args).args;
  // Warm-up: step / 4 * 0.5; decay: cosine from 0.5 to 0.1; then 0.1.
  assertClose(
    [0, 2, 4, 6, 8, 20].map((s) => chordMu(resolved, s)),
    [0, 0.25, 0.5, 0.1 + 0.4 * 0.5 * (1 + Math.cos(Math.PI / 2)), 0.1, 0.1],
    TIGHT,
  );
  // Row 0 a rollout (A 1, ratios 1), row 1 expert data; mu fed as a scalar 0.25.
  const { entry } = configure(POLICY_LOSS_FN, "mix_chord", {});
  const logp = [[-0.5, -1.0], [-2.0, -0.25]];
  const result = await runLoss(
    [rows(logp), rows(logp), vector([1, 0]), ALL, vector([0, 1]), {
      shape: [],
      data: Float32Array.of(0.25),
    }],
    (lp, old, adv, mask, isExpert, mu) =>
      entry.build({ logp: lp, oldLogp: old, advantages: adv, mask, isExpert, scalars: { mu } }, {
        ...configure(POLICY_LOSS_FN, "mix_chord", {}).args,
      }),
  );
  // PPO on row 0 at r = 1: -1 per token, mean -1. phi-SFT on row 1: mean of -logp p (1 - p).
  const p = logp[1].map(Math.exp);
  const sft = (2 * p[0] * (1 - p[0]) + 0.25 * p[1] * (1 - p[1])) / 2;
  assertClose([result.loss], [0.75 * -1 + 0.25 * sft], { ...TIGHT, label: "loss" });
  assertClose([result.metrics.mu], [0.25], TIGHT);
  assertClose(
    result.grad,
    [-0.75 / 2, -0.75 / 2, ...p.map((x) => -0.25 * x * (1 - x) / 2)],
    { ...TIGHT, label: "grad" },
  );
  assertEquals(entry.stepScalars!(resolved, 2), { mu: 0.25 });
});

Deno.test("importance_sampling: gradients match f64 finite differences on random batches", async () => {
  // No detached factor: the gradient is the derivative of the value.
  const { entry, args } = configure(POLICY_LOSS_FN, "importance_sampling", {
    loss_agg_mode: "seq-mean-token-mean",
  });
  await checkGradients({
    label: "importance_sampling",
    inputs: [
      randomInput([3, 4], 80, -2, 0),
      randomInput([3, 4], 81, -2, 0),
      randomInput([3], 82),
      rows([[1, 1, 1, 0], [1, 1, 1, 1], [1, 0, 0, 0]]),
    ],
    wrt: [0],
    build: (logp: Tensor, old: Tensor, adv: Tensor, m: Tensor) =>
      entry.build({ logp, oldLogp: old, advantages: adv, mask: m }, args).loss,
    reference: (logp, old, adv, m) => [
      aggregateRef(
        Array.from(logp, (v, k) => -adv[Math.floor(k / 4)] * Math.exp(v - old[k])),
        m,
        3,
        "seq-mean-token-mean",
      ),
    ],
    ...TIGHT,
  });
});

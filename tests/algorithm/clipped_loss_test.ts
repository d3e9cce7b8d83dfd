/**
 * The ratio-clipped policy losses (ppo, gspo, cispo): loss, metrics and gradient on a fixed batch
 * against arithmetic done by hand in the comments, and gradients on random batches against f64
 * finite differences of a CPU reference (ppo, gspo; cispo's detached weight is checked by hand).
 */

import { configure } from "../../src/util/registry.ts";
import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import { assertClose } from "../_assert_close.ts";
import { assertRejects } from "../_asserts.ts";
import { checkGradients, randomInput } from "../_harness.ts";
import { aggregateRef, oldFor, rows, runLoss, runPolicyLoss, TIGHT, vector } from "./_reference.ts";

/** Builds loss `name` with `args` for checkGradients. */
function lossOf(name: string, args: Record<string, unknown>) {
  const { entry, args: resolved } = configure(POLICY_LOSS_FN, name, args);
  return (logp: Tensor, oldLogp: Tensor, advantages: Tensor, mask: Tensor) =>
    entry.build({ logp, oldLogp, advantages, mask }, resolved).loss;
}

const LOGP = [[-0.5, -1.0, -2.0], [-0.3, -1.2, -0.8]];
const MASK = rows([[1, 1, 1], [1, 1, 0]]);

Deno.test("ppo: clipped surrogate with dual clip, by hand", async () => {
  // clip 0.2 -> [0.8, 1.2], c = 3; A = +1 for row 0, -1 for row 1; 5 tokens count.
  // row 0: r 1.1 -> max(-1.1, -1.1) = -1.1;  r 1.5 -> max(-1.5, -1.2) = -1.2 (clipped);
  //        r 0.7 -> max(-0.7, -0.8) = -0.7.
  // row 1: r 0.9 -> 0.9;  r 4 -> max(4, 1.2) = 4, dual clip min(4, 3) = 3;  r 0.5 is masked.
  // loss = (-1.1 - 1.2 - 0.7 + 0.9 + 3) / 5 = 0.18.  d/dlogp = -A r / 5 where r is live.
  const ratios = [[1.1, 1.5, 0.7], [0.9, 4.0, 0.5]];
  const result = await runPolicyLoss("ppo", {}, [
    rows(LOGP),
    oldFor(LOGP, ratios),
    vector([1, -1]),
    MASK,
  ]);
  assertClose([result.loss], [0.18], { ...TIGHT, label: "loss" });
  assertClose(result.grad, [-1.1 / 5, 0, -0.7 / 5, 0.9 / 5, 0, 0], { ...TIGHT, label: "grad" });
  const m = result.metrics;
  assertClose(
    [m.pg_loss, m.pg_clipfrac, m.pg_clipfrac_lower, m.ratio_mean, m.ppo_kl],
    [0.18, 1 / 5, 1 / 5, (1.1 + 1.5 + 0.7 + 0.9 + 4) / 5, -Math.log(1.1 * 1.5 * 0.7 * 0.9 * 4) / 5],
    { ...TIGHT, label: "metrics" },
  );
});

Deno.test("ppo: clip-higher bounds and per-token advantages, by hand", async () => {
  // clip_range_low 0.2, clip_range_high 0.28 -> [0.8, 1.28]; A per token.
  // row 0 (A 1, 1, -1): r 1.25 -> -1.25 (inside);  r 1.3 -> max(-1.3, -1.28) = -1.28 (clipped);
  //        r 0.75 with A -1 -> max(0.75, 0.8) = 0.8 (clipped below).
  // row 1 (A 2, ...): r 1.1 -> -2.2; the rest masked.  loss = (-1.25 - 1.28 + 0.8 - 2.2) / 4.
  const ratios = [[1.25, 1.3, 0.75], [1.1, 1, 1]];
  const result = await runPolicyLoss(
    "ppo",
    { clip_range_low: 0.2, clip_range_high: 0.28 },
    [rows(LOGP), oldFor(LOGP, ratios), rows([[1, 1, -1], [2, 0, 0]]), rows([[1, 1, 1], [1, 0, 0]])],
  );
  assertClose([result.loss], [(-1.25 - 1.28 + 0.8 - 2.2) / 4], { ...TIGHT, label: "loss" });
  assertClose(result.grad, [-1.25 / 4, 0, 0, -2.2 / 4, 0, 0], { ...TIGHT, label: "grad" });
  assertClose([result.metrics.pg_clipfrac], [2 / 4], { ...TIGHT, label: "clipfrac" });
});

/** f64 PPO per-token loss (verl's formula with Trinity's log-ratio clamp). */
function ppoTokenRef(logp: number, old: number, a: number, lo: number, hi: number, c: number) {
  const r = Math.exp(Math.min(20, Math.max(-20, logp - old)));
  const clipped = Math.max(-a * r, -a * Math.min(hi, Math.max(lo, r)));
  return a < 0 ? Math.min(clipped, -a * c) : clipped;
}

Deno.test("ppo: gradients match f64 finite differences on random batches", async () => {
  // Log-ratios in (-2, 2): ratios from 0.14 to 7.4 cross both clip bounds and the dual clip.
  const mask = rows([[1, 1, 1, 1, 0], [1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]]);
  for (const [i, mode] of ["token-mean", "seq-mean-token-mean"].entries()) {
    const perToken = i === 1;
    const args = { clip_range_low: 0.2, clip_range_high: 0.28, loss_agg_mode: mode };
    await checkGradients({
      label: `ppo ${mode}`,
      inputs: [
        randomInput([4, 5], 40 + i, -2, 0),
        randomInput([4, 5], 50 + i, -2, 0),
        randomInput(perToken ? [4, 5] : [4], 60 + i),
        mask,
      ],
      wrt: [0],
      build: lossOf("ppo", args),
      reference: (logp, old, adv, m) => [
        aggregateRef(
          Array.from(
            logp,
            (v, k) => ppoTokenRef(v, old[k], adv[perToken ? k : Math.floor(k / 5)], 0.8, 1.28, 3),
          ),
          m,
          4,
          mode as "token-mean",
        ),
      ],
      ...TIGHT,
    });
  }
});

Deno.test("gspo: sequence ratio exp(mean log-ratio), clipped; gradient s * A per token", async () => {
  // Log-ratios: row 0 [0.1, -0.2, 0.4] -> mean 0.1, s = e^0.1 = 1.10517 (> 1.1: clipped with
  // A = 1); row 1 [-0.3, -0.1, (5 masked)] -> mean -0.2, s = e^-0.2 = 0.81873 (< 0.9, A = 2 > 0:
  // not clipped). clip 0.1 -> [0.9, 1.1]; seq-mean-token-mean:
  // loss = (-1.1 + -2 e^-0.2) / 2;  d/dlogp on row 1 = -A s / (2 rows * 2 tokens).
  const ratios = [[0.1, -0.2, 0.4], [-0.3, -0.1, 5]].map((r) => r.map(Math.exp));
  const s = Math.exp(-0.2);
  const result = await runPolicyLoss("gspo", { clip_range_low: 0.1, clip_range_high: 0.1 }, [
    rows(LOGP),
    oldFor(LOGP, ratios),
    vector([1, 2]),
    MASK,
  ]);
  assertClose([result.loss], [(-1.1 - 2 * s) / 2], { ...TIGHT, label: "loss" });
  assertClose(result.grad, [0, 0, 0, -2 * s / 4, -2 * s / 4, 0], { ...TIGHT, label: "grad" });
  const m = result.metrics;
  // Clipped: the 3 tokens of row 0 of 5.  ppo_kl = -(0.1 - 0.2 + 0.4 - 0.3 - 0.1) / 5.
  assertClose([m.pg_clipfrac, m.ppo_kl, m.ppo_kl_seq], [3 / 5, 0.02, -(0.1 - 0.2) / 2], {
    ...TIGHT,
    label: "metrics",
  });
});

Deno.test("gspo: gradients match f64 finite differences of the sequence-level objective", async () => {
  // With one advantage per sequence, GSPO-token's gradient equals that of the sequence-level
  // objective, so finite differences of its value check the stop-gradient construction.
  const mask = rows([[1, 1, 1, 0], [1, 1, 1, 1], [1, 0, 0, 0]]);
  for (const mode of ["seq-mean-token-mean", "token-mean"] as const) {
    await checkGradients({
      label: `gspo ${mode}`,
      inputs: [
        randomInput([3, 4], 70, -1, 0),
        randomInput([3, 4], 71, -1, 0),
        randomInput([3], 72),
        mask,
      ],
      wrt: [0],
      build: lossOf("gspo", { clip_range_low: 0.05, clip_range_high: 0.05, loss_agg_mode: mode }),
      reference: (logp, old, adv, m) => {
        const perToken = Array.from(logp, (_, k) => {
          const b = Math.floor(k / 4);
          let sum = 0;
          let n = 0;
          for (let t = 0; t < 4; t++) {
            sum += (logp[b * 4 + t] - old[b * 4 + t]) * m[b * 4 + t];
            n += m[b * 4 + t];
          }
          const ratio = Math.exp(sum / (n + 1e-8));
          return Math.max(-adv[b] * ratio, -adv[b] * Math.min(1.05, Math.max(0.95, ratio)));
        });
        return [aggregateRef(perToken, m, 3, mode)];
      },
      ...TIGHT,
    });
  }
});

Deno.test("cispo: -A * sg(clip(r)) * logp; the weight is detached", async () => {
  // Defaults: clip_range_low 1 -> lower bound 0, clip_range_high 0.28 -> upper 1.28.
  // row 0 (A 1): r 1.1 -> -1.1 * -0.5 = 0.55;  r 1.5 -> -1.28 * -1 = 1.28.
  // row 1 (A -2): r 0.5 -> 2 * 0.5 * -2 = -2;  r 2 -> 2 * 1.28 * -0.25 = -0.64.
  // loss = (0.55 + 1.28 - 2 - 0.64) / 4;  d/dlogp = -A * clip(r) / 4 (no gradient through r).
  const logp = [[-0.5, -1.0], [-2, -0.25]];
  const inputs = [
    rows(logp),
    oldFor(logp, [[1.1, 1.5], [0.5, 2.0]]),
    vector([1, -2]),
    rows([[1, 1], [1, 1]]),
  ];
  const result = await runPolicyLoss("cispo", {}, inputs);
  assertClose([result.loss], [(0.55 + 1.28 - 2 - 0.64) / 4], { ...TIGHT, label: "loss" });
  assertClose(result.grad, [-1.1 / 4, -1.28 / 4, 1 / 4, 2.56 / 4], { ...TIGHT, label: "grad" });
  // Outside [0, 1.28]: r 1.5 and 2.  Clipped as PPO would: r 1.5 with A > 0 only.
  const m = result.metrics;
  assertClose([m.is_clipfrac, m.pg_clipfrac, m.ppo_kl], [2 / 4, 1 / 4, -Math.log(1.1 * 1.5) / 4], {
    ...TIGHT,
    label: "metrics",
  });
  // Trinity's variant drops the token PPO would clip: (0.55 - 2 - 0.64) / 4.
  const dropped = await runPolicyLoss("cispo", { drop_clipped_tokens: true }, inputs);
  assertClose([dropped.loss], [(0.55 - 2 - 0.64) / 4], { ...TIGHT, label: "dropped loss" });
  assertClose(dropped.grad, [-1.1 / 4, 0, 1 / 4, 2.56 / 4], { ...TIGHT, label: "dropped grad" });
});

Deno.test("clipped losses: bad arguments and missing inputs are errors", async () => {
  const inputs = [rows(LOGP), rows(LOGP), vector([1, 1]), MASK];
  await assertRejects(
    () => runPolicyLoss("ppo", { clip_ratio_c: 1 }, inputs),
    Error,
    'Cannot configure policy loss fn "ppo": key "clip_ratio_c" expected a number > 1, received 1',
  );
  await assertRejects(
    () => runPolicyLoss("ppo", { clip_range_low: -0.1 }, inputs),
    Error,
    'Cannot configure policy loss fn "ppo": key "clip_range_low" (or "clip_range") expected a number >= 0, received -0.1',
  );
  await assertRejects(
    () => runPolicyLoss("ppo", { loss_agg_mode: "sum" }, inputs),
    Error,
    'key "loss_agg_mode" expected one of token-mean, seq-mean-token-sum, seq-mean-token-mean, seq-mean-token-sum-norm, received "sum"',
  );
  const { entry, args } = configure(POLICY_LOSS_FN, "ppo");
  await assertRejects(
    () => runLoss([rows(LOGP), MASK], (logp, mask) => entry.build({ logp, mask }, args)),
    Error,
    'Cannot build policy loss fn "ppo": input "oldLogp" expected shape [2,3], received none',
  );
  await assertRejects(
    () => runPolicyLoss("ppo", {}, [rows(LOGP), rows(LOGP), vector([1, 1, 1]), MASK]),
    Error,
    'input "advantages" expected shape [2] or [2,3], received x2[3]:f32',
  );
});

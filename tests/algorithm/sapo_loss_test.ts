/**
 * SAPO's soft-gated policy loss: value, gradient and metrics on a fixed batch against the
 * formula worked by hand in f64, gradients on random batches against f64 finite differences of
 * a CPU reference, and its argument checks.
 */

import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";
import { configure } from "../../src/algorithm/registry.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import { assertClose } from "../_assert_close.ts";
import { assertRejects } from "../_asserts.ts";
import { checkGradients, randomInput } from "../_harness.ts";
import { aggregateRef, rows, runLoss, TIGHT, vector } from "./_reference.ts";

/** The gate `4 / tau * sigmoid(tau * (r - 1))` in f64. */
const gateRef = (r: number, tau: number) => 4 / tau / (1 + Math.exp(-tau * (r - 1)));

/** SAPO's per-token loss `-A * gate(r)` in f64 (log-ratio clamped like the op). */
function sapoTokenRef(logp: number, old: number, a: number, tauPos: number, tauNeg: number) {
  const r = Math.exp(Math.min(20, Math.max(-20, logp - old)));
  return -a * gateRef(r, a > 0 ? tauPos : tauNeg);
}

function build(args: Record<string, unknown>) {
  const { entry, args: resolved } = configure(POLICY_LOSS_FN, "sapo", args);
  return (logp: Tensor, oldLogp: Tensor, advantages: Tensor, mask: Tensor) =>
    entry.build({ logp, oldLogp, advantages, mask }, resolved);
}

Deno.test("sapo: -A * 4/tau * sigmoid(tau (r - 1)), tau by the sign of A; gradient by hand", async () => {
  // Defaults tau_pos 1, tau_neg 1.05, token-mean over the 5 live tokens.
  const logp = [[-0.5, -1.0, -2.0], [-0.3, -1.2, -0.8]];
  const ratios = [[1, 1.5, 0.7], [0.9, 3, 2]];
  const old = logp.map((row, b) => row.map((v, t) => v - Math.log(ratios[b][t])));
  const adv = [1, -2];
  const mask = [[1, 1, 1], [1, 1, 0]];
  const result = await runLoss(
    [rows(logp), rows(old), vector(adv), rows(mask)],
    (...xs) => build({})(xs[0], xs[1], xs[2], xs[3]),
  );
  let loss = 0;
  const grad: number[] = [];
  let gates = 0;
  for (let b = 0; b < 2; b++) {
    const tau = adv[b] > 0 ? 1 : 1.05;
    for (let t = 0; t < 3; t++) {
      const r = ratios[b][t];
      const s = 1 / (1 + Math.exp(-tau * (r - 1)));
      loss += mask[b][t] * -adv[b] * gateRef(r, tau) / 5;
      gates += mask[b][t] * gateRef(r, tau) / 5;
      // d/dlogp of -A * 4/tau * s = -A * 4 s (1 - s) * r: the paper's weight, 1 at r = 1.
      grad.push(mask[b][t] * -adv[b] * 4 * s * (1 - s) * r / 5);
    }
  }
  assertClose([result.loss], [loss], { ...TIGHT, label: "loss" });
  assertClose(result.grad, grad, { ...TIGHT, label: "grad" });
  assertClose([grad[0]], [-1 / 5], { ...TIGHT, label: "on-policy weight" });
  const m = result.metrics;
  assertClose([m.pg_loss, m.avg_soft_gate, m.pos_adv_frac], [loss, gates, 3 / 5], {
    ...TIGHT,
    label: "metrics",
  });
  // Trinity's form: loss -A * sg(gate) * logp, gradient -A * gate / 5 on every live token.
  const trinity = await runLoss(
    [rows(logp), rows(old), vector(adv), rows(mask)],
    (...xs) => build({ detach_gate: true })(xs[0], xs[1], xs[2], xs[3]),
  );
  const tokens = [0, 1, 2, 3, 4, 5].map((k) => [Math.floor(k / 3), k % 3]);
  const weight = ([b, t]: number[]) =>
    mask[b][t] * -adv[b] * gateRef(ratios[b][t], adv[b] > 0 ? 1 : 1.05) / 5;
  assertClose(trinity.grad, tokens.map(weight), { ...TIGHT, label: "trinity grad" });
  assertClose([trinity.loss], [tokens.reduce((a, [b, t]) => a + weight([b, t]) * logp[b][t], 0)], {
    ...TIGHT,
    label: "trinity loss",
  });
  assertClose([trinity.grad[0]], [-2 / 5], { ...TIGHT, label: "trinity on-policy weight 2/tau" });
});

Deno.test("sapo: gradients match f64 finite differences on random batches", async () => {
  const mask = rows([[1, 1, 1, 1, 0], [1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]]);
  for (const [i, mode] of ["token-mean", "seq-mean-token-mean"].entries()) {
    const perToken = i === 1;
    const args = { tau_pos: 0.7, tau_neg: 1.3, loss_agg_mode: mode };
    await checkGradients({
      label: `sapo ${mode}`,
      inputs: [
        randomInput([4, 5], 80 + i, -2, 0),
        randomInput([4, 5], 90 + i, -2, 0),
        randomInput(perToken ? [4, 5] : [4], 100 + i),
        mask,
      ],
      wrt: [0],
      build: (...xs) => build(args)(xs[0], xs[1], xs[2], xs[3]).loss,
      reference: (logp, old, adv, m) => [
        aggregateRef(
          Array.from(
            logp,
            (v, k) => sapoTokenRef(v, old[k], adv[perToken ? k : Math.floor(k / 5)], 0.7, 1.3),
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

Deno.test("sapo: temperatures must be positive with tau_neg >= tau_pos", async () => {
  const inputs = [rows([[-1, -2]]), rows([[-1, -2]]), vector([1]), rows([[1, 1]])];
  await assertRejects(
    () => runLoss(inputs, (...xs) => build({ tau_pos: 1.2 })(xs[0], xs[1], xs[2], xs[3])),
    Error,
    'Cannot configure policy loss fn "sapo": expected tau_pos > 0 and tau_neg >= tau_pos, received tau_pos 1.2, tau_neg 1.05',
  );
  await assertRejects(
    () => runLoss(inputs, (...xs) => build({ tau_pos: 0 })(xs[0], xs[1], xs[2], xs[3])),
    Error,
    "received tau_pos 0",
  );
});

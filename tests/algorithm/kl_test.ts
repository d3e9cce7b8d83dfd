/**
 * KL fns: each estimator's per-token values against its formula evaluated by hand on fixed
 * log-ratios (including low_var_kl's clamps), gradients against f64 finite differences, and
 * `klLoss` (coefficient times the aggregate, with its metric) in value and gradient.
 */

import { KL_FN, klLoss } from "../../src/algorithm/kl.ts";
import { configure } from "../../src/util/registry.ts";
import { Graph } from "../../src/graph/graph.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { checkGradients, randomInput, runOps } from "../_harness.ts";
import { aggregateRef, rows, runLoss, TIGHT } from "./_reference.ts";

// d = logp - refLogp per token: 0.5, -0.25, 0, 2, -25 (far out: low_var_kl clamps), 0.1.
const LOGP = rows([[-1, -2, -0.5], [-1, -30, -3]]);
const REF = rows([[-1.5, -1.75, -0.5], [-3, -5, -3.1]]);
const D = [0.5, -0.25, 0, 2, -25, 0.1];

/** f64 formula of each estimator of d. */
const FORMULAS: Record<string, (d: number) => number> = {
  k1: (d) => d,
  k2: (d) => d * d / 2,
  k3: (d) => Math.exp(-d) - 1 + d,
  low_var_kl: (d) => Math.min(10, Math.exp(-Math.max(-20, d)) - 1 + Math.max(-20, d)),
  abs: Math.abs,
};

Deno.test("KL fns: per-token values", async () => {
  // By hand: k3(0.5) = e^-0.5 - 0.5 = 0.10653; k3(-25) = e^25 - 26 = 7.2e10, which low_var_kl
  // first computes at d = -20 (e^20 - 21 = 4.85e8) and then clamps to 10.
  assertClose([FORMULAS.k3(0.5), FORMULAS.low_var_kl(-25)], [0.1065306597, 10], { rtol: 1e-9 });
  for (const [name, formula] of Object.entries(FORMULAS)) {
    const [kl] = await runOps([LOGP, REF], (a, b) => KL_FN.get(name).perToken(a, b)!);
    assertClose(kl, D.map(formula), { atol: 1e-6, rtol: 1e-5, label: name });
  }
  const g = new Graph();
  assertEquals(KL_FN.get("none").perToken(g.input([2, 3]), g.input([2, 3])), null);
  assertThrows(
    () => KL_FN.get("k1").perToken(g.input([2, 3]), g.input([3, 2])),
    Error,
    "Cannot estimate KL: logp [2,3] and refLogp [3,2] differ in shape",
  );
});

Deno.test("KL fns: gradients w.r.t. logp match f64 finite differences", async () => {
  const logp = randomInput([3, 5], 21, -2, 0);
  const ref = randomInput([3, 5], 22, -2, 0); // |d| < 2: away from low_var_kl's clamps
  for (const [name, formula] of Object.entries(FORMULAS)) {
    if (name === "abs") continue; // checked below on fixed data
    await checkGradients({
      label: name,
      inputs: [logp, ref],
      wrt: [0],
      build: (a, b) => KL_FN.get(name).perToken(a, b)!,
      reference: (a, b) => Array.from(a, (v, i) => formula(v - b[i])),
      ...TIGHT,
    });
  }
  await checkGradients({
    label: "abs",
    inputs: [LOGP, REF],
    wrt: [0],
    build: (a, b) => KL_FN.get("abs").perToken(a, b)!,
    reference: (a, b) => Array.from(a, (v, i) => Math.abs(v - b[i])), // d = 0 at [0, 2]: 0 both
    ...TIGHT,
  });
});

Deno.test("klLoss: kl_coef * aggregate(kl) with the unscaled aggregate as metric", async () => {
  const mask = rows([[1, 1, 0], [1, 0, 0]]);
  // k2 on the masked tokens d = 0.5, -0.25, 2: (0.125 + 0.03125 + 2) / 3 = 0.71875.
  const { entry, args } = configure(KL_FN, "k2", { kl_coef: 0.1 });
  const result = await runLoss([LOGP, REF, mask], (a, b, m) => klLoss(entry, args, a, b, m)!);
  assertClose([result.loss, result.metrics.kl_loss], [0.071875, 0.71875], {
    ...TIGHT,
    label: "k2 loss",
  });
  // d/dlogp of 0.1 * mean(d^2 / 2) = 0.1 * d / 3 on masked tokens.
  assertClose(result.grad, [0.5, -0.25, 0, 2, 0, 0].map((d) => 0.1 * d / 3), {
    ...TIGHT,
    label: "k2 grad",
  });
  await checkGradients({
    label: "klLoss k3 seq-mean-token-sum",
    inputs: [randomInput([3, 4], 31, -2, 0), randomInput([3, 4], 32, -2, 0), mask3x4()],
    wrt: [0],
    build: (a, b, m) =>
      klLoss(KL_FN.get("k3"), { kl_coef: 0.5 }, a, b, m, "seq-mean-token-sum")!.loss,
    reference: (a, b, m) => [
      0.5 *
      aggregateRef(Array.from(a, (v, i) => FORMULAS.k3(v - b[i])), m, 3, "seq-mean-token-sum"),
    ],
    ...TIGHT,
  });
  const g = new Graph();
  const t = g.input([2, 3]);
  assertEquals(klLoss(KL_FN.get("none"), { kl_coef: 1 }, t, t, t), null);
});

function mask3x4() {
  return rows([[1, 1, 1, 0], [0, 1, 1, 1], [0, 0, 0, 0]]);
}

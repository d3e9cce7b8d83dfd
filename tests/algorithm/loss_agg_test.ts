/**
 * Loss aggregation: the four `loss_agg_mode`s on a batch with a fully masked row against sums
 * done by hand, gradients against f64 finite differences, and the shape checks.
 */

import { aggregateLoss, LOSS_AGG_MODES, maskedRowMean } from "../../src/algorithm/loss_agg.ts";
import { Graph } from "../../src/graph/graph.ts";
import { assertClose } from "../_assert_close.ts";
import { assertThrows } from "../_asserts.ts";
import { checkGradients, randomInput, runOps } from "../_harness.ts";
import { aggregateRef, rows, TIGHT } from "./_reference.ts";

const VALUES = rows([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]);
const MASK = rows([[1, 1, 1, 1], [1, 0, 0, 0], [0, 0, 0, 0]]); // the last row fully masked

Deno.test("aggregateLoss: each mode by hand, the fully masked row adds 0", async () => {
  // Row sums 10, 5, 0 over 4, 1, 0 tokens.
  const expected = {
    "token-mean": 15 / 5,
    "seq-mean-token-sum": (10 + 5 + 0) / 3,
    "seq-mean-token-mean": (2.5 + 5 + 0) / 3,
    "seq-mean-token-sum-norm": 15 / 4, // divided by T = 4
  };
  const outs = await runOps([VALUES, MASK], (v, m) => [
    ...LOSS_AGG_MODES.map((mode) => aggregateLoss(v, m, mode)),
    aggregateLoss(v, m, "seq-mean-token-sum-norm", 10),
    maskedRowMean(v, m),
  ]);
  LOSS_AGG_MODES.forEach((mode, i) => {
    assertClose(outs[i], [expected[mode]], { ...TIGHT, label: mode });
  });
  assertClose(outs[4], [1.5], { ...TIGHT, label: "sum-norm with loss_scale_factor 10" });
  assertClose(outs[5], [2.5, 5, 0], { ...TIGHT, label: "maskedRowMean" });
});

Deno.test("aggregateLoss: gradients match f64 finite differences", async () => {
  for (const mode of LOSS_AGG_MODES) {
    await checkGradients({
      label: mode,
      inputs: [randomInput([3, 4], 7), MASK],
      wrt: [0],
      build: (v, m) => aggregateLoss(v, m, mode, mode === "seq-mean-token-sum-norm" ? 6 : null),
      reference: (v, m) => [aggregateRef(v, m, 3, mode, 6)],
      ...TIGHT,
    });
  }
});

Deno.test("aggregateLoss: values and mask must be [B, T] of one shape", () => {
  const g = new Graph();
  assertThrows(
    () => aggregateLoss(g.input([2, 3]), g.input([3, 2]), "token-mean"),
    Error,
    "Cannot aggregate a loss: expected values and an f32 mask of one shape [B, T], received input[2,3]:f32 and input[3,2]:f32",
  );
});

/**
 * Entropy loss fns: `-entropy_coef * aggregate(H)` by hand on two-way softmaxes, its gradient
 * w.r.t. the logits against f64 finite differences, `mix` leaving expert rows out, `none`.
 */

import { ENTROPY_LOSS_FN } from "../../src/algorithm/entropy.ts";
import { configure } from "../../src/util/registry.ts";
import { Graph } from "../../src/graph/graph.ts";
import { tokenEntropy } from "../../src/ops/token_logprobs.ts";
import { tokenEntropyRef } from "../../src/reference/token_logprobs.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertRejects } from "../_asserts.ts";
import { checkGradients, randomInput } from "../_harness.ts";
import { aggregateRef, rows, runLoss, TIGHT, vector } from "./_reference.ts";

Deno.test("entropy loss: -coef * mean entropy, by hand", async () => {
  // Token 0: logits [0, 0] -> H = ln 2.  Token 1: [ln 3, 0] -> p = [3/4, 1/4],
  // H = -(0.75 ln 0.75 + 0.25 ln 0.25).
  const h1 = -(0.75 * Math.log(0.75) + 0.25 * Math.log(0.25));
  const { entry, args } = configure(ENTROPY_LOSS_FN, "default", { entropy_coef: 0.01 });
  const logits = { shape: [1, 2, 2], data: Float32Array.from([0, 0, Math.log(3), 0]) };
  const result = await runLoss(
    [logits, rows([[1, 1]])],
    (z, mask) => entry.build({ entropy: tokenEntropy(z), mask }, args)!,
  );
  const mean = (Math.LN2 + h1) / 2;
  assertClose([result.loss, result.metrics.entropy], [-0.01 * mean, mean], TIGHT);
});

Deno.test("entropy loss: gradient w.r.t. logits matches f64 finite differences", async () => {
  const mask = rows([[1, 1, 0], [0, 1, 1]]);
  const { entry, args } = configure(ENTROPY_LOSS_FN, "default", {
    entropy_coef: 0.3,
    loss_agg_mode: "seq-mean-token-mean",
  });
  await checkGradients({
    label: "entropy",
    inputs: [randomInput([2, 3, 5], 80, -2, 2), mask],
    wrt: [0],
    build: (logits, m) => entry.build({ entropy: tokenEntropy(logits), mask: m }, args)!.loss,
    reference: (logits, m) => [
      -0.3 * aggregateRef(tokenEntropyRef(logits, 5), m, 2, "seq-mean-token-mean"),
    ],
    ...TIGHT,
  });
});

Deno.test("entropy loss: mix counts rollout rows only; none builds nothing", async () => {
  // Row 0 (rollout) logits [0, 0] -> ln 2; row 1 (expert) is left out.
  const { entry, args } = configure(ENTROPY_LOSS_FN, "mix", { entropy_coef: 1 });
  const logits = { shape: [2, 1, 2], data: Float32Array.from([0, 0, 5, 0]) };
  const result = await runLoss(
    [logits, rows([[1], [1]]), vector([0, 1])],
    (z, mask, isExpert) => entry.build({ entropy: tokenEntropy(z), mask, isExpert }, args)!,
  );
  assertClose([result.metrics.entropy], [Math.LN2], TIGHT);
  await assertRejects(
    () =>
      runLoss(
        [logits, rows([[1], [1]])],
        (z, mask) => entry.build({ entropy: tokenEntropy(z), mask }, args)!,
      ),
    Error,
    'Cannot build entropy loss fn "mix": input "isExpert" expected shape [2], received none',
  );
  const g = new Graph();
  assertEquals(
    ENTROPY_LOSS_FN.get("none").build({ entropy: g.input([1, 1]), mask: g.input([1, 1]) }, {}),
    null,
  );
});

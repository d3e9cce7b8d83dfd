/**
 * stopGradient: the forward value is the input's (a view, no kernel), and autodiff treats it as a
 * constant: d/dx of x * sg(x) is sg(x) = x, not 2x, and a path only through it gives zeros.
 */

import { grad } from "../../src/graph/autodiff.ts";
import { Graph } from "../../src/graph/graph.ts";
import { mul } from "../../src/ops/binary.ts";
import { stopGradient } from "../../src/ops/stop_gradient.ts";
import { exp } from "../../src/ops/unary.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals } from "../_asserts.ts";
import { randomInput, runOps } from "../_harness.ts";

Deno.test("stopGradient: identity forward, no gradient backward", async () => {
  const x = randomInput([3, 5], 11);
  const [y, dx] = await runOps([x], (t) => {
    const s = stopGradient(exp(t));
    return [s, grad(mul(t, s), [t])[0]];
  });
  const e = Array.from(x.data, Math.exp);
  assertClose(y, e, { label: "forward" });
  assertClose(dx, e, { label: "d/dx x * sg(exp(x)) = exp(x)" });
  const [zero] = await runOps([x], (t) => grad(stopGradient(t), [t]));
  assertClose(zero, new Float32Array(15), { atol: 0, rtol: 0, label: "path only through sg" });
});

Deno.test("stopGradient is a view: no kernel launch of its own", () => {
  const g = new Graph();
  const t = g.input([2, 2]);
  const s = stopGradient(t);
  assertEquals(s.source.kind === "op" ? s.source.op.aliasOf : undefined, 0);
});

/**
 * gradientSum (a copy of the first operand, then `shaders/gradient_sum.wgsl` adding the second)
 * against the CPU reference on odd sizes (one above a workgroup of 256), and its backward: both
 * inputs receive the output's gradient unchanged.
 */

import { assertClose } from "../_assert_close.ts";
import { randomInput, runOps } from "../_harness.ts";
import { grad } from "../../src/graph/autodiff.ts";
import { gradientSum } from "../../src/graph/gradient_sum.ts";
import { binaryRef } from "../../src/reference/elementwise.ts";

for (const shape of [[3, 7], [257], [2, 3, 5]]) {
  Deno.test(`gradientSum ${shape.join("x")} equals a + b; both inputs get its gradient`, async () => {
    const inputs = [randomInput(shape, 1, -2, 2), randomInput(shape, 2, -2, 2)];
    const seed = randomInput(shape, 3, -2, 2);
    const [sum, da, db] = await runOps([...inputs, seed], (a, b, s) => {
      const out = gradientSum(a, b);
      return [out, ...grad(out, [a, b], s)];
    });
    const [a, b] = inputs.map((i) => i.data);
    assertClose(sum, binaryRef("add", a, shape, b, shape).data, { label: "a + b" });
    assertClose(da, seed.data, { atol: 0, rtol: 0, label: "d/da" });
    assertClose(db, seed.data, { atol: 0, rtol: 0, label: "d/db" });
  });
}

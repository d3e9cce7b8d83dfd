import { assertThrows } from "../_asserts.ts";
import { Graph } from "../../src/graph/graph.ts";
import { padLast, sliceLast } from "../../src/ops/slice.ts";
import { padLastRef, sliceLastRef } from "../../src/reference/slice.ts";
import { assertClose } from "../_assert_close.ts";
import { checkGradients, randomInput, runOps } from "../_harness.ts";

Deno.test("sliceLast splits a fused projection into three windows, padLast inverts", async () => {
  const x = randomInput([3, 5, 3 * 7], 1);
  const outs = await runOps([x], (t) => [0, 7, 14].map((s) => sliceLast(t, s, 7)));
  outs.forEach((out, i) =>
    assertClose(out, sliceLastRef(x.data, 21, 7 * i, 7), { label: `window ${i}` })
  );
  const small = randomInput([300, 4], 2);
  const [padded] = await runOps([small], (t) => padLast(t, 5, 11));
  assertClose(padded, padLastRef(small.data, 4, 5, 11), { label: "pad" });
});

Deno.test("sliceLast and padLast gradients match finite differences", async () => {
  await checkGradients({
    label: "slice",
    inputs: [randomInput([4, 13], 3)],
    build: (t) => sliceLast(t, 3, 6),
    reference: (t) => sliceLastRef(t, 13, 3, 6),
  });
  await checkGradients({
    label: "pad",
    inputs: [randomInput([4, 6], 4)],
    build: (t) => padLast(t, 2, 9),
    reference: (t) => padLastRef(t, 6, 2, 9),
  });
});

Deno.test("a window outside the last axis is rejected", () => {
  const x = new Graph().input([2, 8]);
  assertThrows(() => sliceLast(x, 5, 4), Error, "window [5, 9) inside 8 columns");
});

import { assertEquals, assertThrows } from "../_asserts.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { BufferPool } from "../../src/gpu/buffer_pool.ts";
import { SharedSlots } from "../../src/gpu/shared_slots.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import { add, mul } from "../../src/ops/binary.ts";
import { exp, scale } from "../../src/ops/unary.ts";
import { assertClose } from "../_assert_close.ts";

Deno.test("shared slots: graphs share buffers of a size class, never one twice in a graph", async () => {
  const { device } = await getGpu();
  const pool = new BufferPool(device);
  const shared = new SharedSlots(pool);
  const first = shared.lend([1000, 1000, 5000], "first");
  assertEquals(new Set(first).size, 3);
  const second = shared.lend([5000, 900, 300], "second");
  // 5000 and 900 bytes are served by the first graph's buffers of their classes; 300 is new.
  assertEquals(second[0], first[2]);
  assertEquals(first.slice(0, 2).includes(second[1]), true);
  assertEquals(first.includes(second[2]), false);
  assertEquals(pool.allocatedBytes, 1024 + 1024 + 8192 + 512);
  shared.giveBack(first);
  // Still used by the second graph: only the first graph's other 1 KiB buffer is free.
  assertEquals(pool.freeBytes, 1024);
  shared.giveBack(second);
  assertEquals(pool.freeBytes, pool.allocatedBytes);
  assertThrows(() => shared.giveBack([first[0]]), Error, "it was not lent");
  pool.trim();
});

/** `x` through a chain of ops whose intermediates live within the run. */
function chain(x: Tensor, links: number): Tensor {
  let h = x;
  for (let i = 0; i < links; i++) h = add(exp(scale(h, 0.25)), h);
  return h;
}

/** The same chain on the CPU. */
function chainRef(x: readonly number[], links: number): number[] {
  return x.map((v) => {
    for (let i = 0; i < links; i++) v = Math.exp(0.25 * v) + v;
    return v;
  });
}

Deno.test("shared slots: two graphs run in turn keep their own results", async () => {
  const gpu = await getGpu();
  const n = 4099;
  const g1 = new Graph();
  const x1 = g1.input([n], "f32", "x1");
  const y1 = chain(x1, 3);
  const g2 = new Graph();
  const x2 = g2.input([n], "f32", "x2");
  const w2 = g2.input([n], "f32", "w2");
  const y2 = mul(chain(x2, 2), w2);
  const first = await compileGraph(gpu, [y1], "first");
  const allocated = gpu.pool.allocatedBytes;
  const second = await compileGraph(gpu, [y2], "second");
  // The second graph's intermediates went into the first graph's buffers: it added only its
  // inputs and output.
  assertEquals(gpu.pool.allocatedBytes - allocated <= 3 * gpu.pool.sizeFor(4 * n), true);
  const values = (seed: number) =>
    Float32Array.from({ length: n }, (_, i) => ((i * seed) % 17) / 8 - 1);
  const [a, b, w] = [values(3), values(5), values(7)];
  await first.run(new Map([[x1, a]]));
  await second.run(new Map([[x2, b], [w2, w]]));
  await first.run(new Map([[x1, b]]));
  // Each graph's output outlives the other graph's runs; the intermediates did not need to.
  const [out2] = await second.read([y2]);
  const [out1] = await first.read([y1]);
  assertClose(out1 as Float32Array, chainRef([...b], 3), { atol: 1e-5, rtol: 1e-5 });
  const expected2 = chainRef([...b], 2).map((v, i) => v * w[i]);
  assertClose(out2 as Float32Array, expected2, { atol: 1e-5, rtol: 1e-5 });
  first.destroy();
  second.destroy();
});

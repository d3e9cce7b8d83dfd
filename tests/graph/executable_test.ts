import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { compileGraph, type Feed } from "../../src/graph/executable.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import { Graph } from "../../src/graph/graph.ts";
import { planMemory } from "../../src/graph/memory_plan.ts";
import { schedule } from "../../src/graph/schedule.ts";
import { add, mul } from "../../src/ops/binary.ts";
import { reshape } from "../../src/ops/reshape.ts";
import { exp, scale } from "../../src/ops/unary.ts";
import { sumLast } from "../../src/ops/reduce.ts";
import { runTimed } from "../../src/gpu/timing.ts";
import { prepareDispatch } from "../../src/gpu/dispatch.ts";
import { readBuffers } from "../../src/gpu/readback.ts";
import { packParams } from "../../src/gpu/kernel_params.ts";
import { matmul } from "../../src/ops/matmul.ts";
import { matmulRef } from "../../src/reference/matmul.ts";
import { uniformArray } from "../../src/util/random.ts";
import { assertClose } from "../_assert_close.ts";

Deno.test("memory plan reuses slots of dead intermediates and keeps outputs", () => {
  const g = new Graph();
  const x = g.input([1000]);
  let h = x;
  for (let i = 0; i < 10; i++) h = exp(scale(h, 0.5));
  const order = schedule([h]);
  const plan = planMemory(order, new Set([h]));
  // 20 op results of 4000 bytes, but a chain needs only two live slots at a time plus the
  // input and the output.
  assertEquals(plan.unsharedBytes, 19 * 4000);
  const shared = plan.slotBytes.length;
  assertEquals(shared <= 4, true, `expected <= 4 slots, got ${shared}`);
  const outSlot = plan.slotOf.get(h)!;
  for (const node of order) {
    if (node !== h) assertEquals(plan.slotOf.get(node) === outSlot, false);
  }
});

Deno.test("memory plan: small results kept long do not pin the slots of large short-lived ones", () => {
  // Each layer makes two short-lived [100, 8] results and keeps its [100, 1] result to the end,
  // like a decoder layer's input kept for the backward pass beside its MLP activations.
  const g = new Graph();
  const x = g.input([100, 1]);
  const w = g.input([100, 8]);
  const layers = 10;
  const kept = [x];
  for (let i = 0; i < layers; i++) kept.push(sumLast(exp(add(kept[i], w))));
  // The last layer's result first, so the schedule runs every layer before the sums.
  const out = kept.slice(1).reverse().reduce((acc, h) => add(acc, h));
  const plan = planMemory(schedule([out]), new Set([out]));
  const small = 100 * 4;
  const large = 8 * small;
  // The inputs, the output, every kept result and two large slots (a layer's two large results
  // live at once); a plan that put each kept result into a large slot freed just before it
  // needed 12 large slots (39200 bytes).
  const bound = large + small + small + layers * small + 2 * large;
  const total = plan.slotBytes.reduce((a, b) => a + b, 0);
  assertEquals(total <= bound, true, `expected <= ${bound} bytes of slots, got ${total}`);
});

Deno.test("a view shares storage and keeps its root alive", () => {
  const g = new Graph();
  const x = g.input([4, 6]);
  const y = exp(x);
  const v = reshape(y, [24]);
  const z = add(v, v);
  const w = mul(reshape(y, [4, 6]), reshape(z, [4, 6]));
  const order = schedule([w]);
  const plan = planMemory(order, new Set([w]));
  assertEquals(plan.slotOf.get(v), plan.slotOf.get(y));
  // y is read by w at the end, so z may not take y's slot.
  assertEquals(plan.slotOf.get(z) === plan.slotOf.get(y), false);
});

Deno.test("a compiled graph replays with new inputs and one submit per run", async () => {
  const gpu = await getGpu();
  const g = new Graph();
  const a = g.input([3, 5], "f32", "a");
  const b = g.input([5], "f32", "b");
  const y = mul(add(a, b), b);
  const exe = await compileGraph(gpu, [y], "replay");
  assertEquals(exe.stats.dispatches, 2);
  for (const shift of [0, 1, 2]) {
    const av = Float32Array.from({ length: 15 }, (_, i) => i + shift);
    const bv = Float32Array.from({ length: 5 }, (_, i) => 0.5 * i - shift);
    await exe.run(new Map([[a, av], [b, bv]]));
    const [out] = await exe.read([y]);
    assertClose(out, Array.from(av, (v, i) => (v + bv[i % 5]) * bv[i % 5]), {
      label: `run ${shift}`,
    });
  }
  exe.destroy();
});

Deno.test("an input can be fed from a GPU buffer and re-run without feeding again", async () => {
  const gpu = await getGpu();
  const source = gpu.device.createBuffer({
    size: 32,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  gpu.device.queue.writeBuffer(source, 0, Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8]));
  const g = new Graph();
  const x = g.input([8]);
  const y = scale(x, 3);
  const exe = await compileGraph(gpu, [y]);
  await exe.run(new Map([[x, source]]));
  await exe.run();
  const [out] = await exe.read([y]);
  assertEquals(Array.from(out), [3, 6, 9, 12, 15, 18, 21, 24]);
  exe.destroy();
  source.destroy();
});

Deno.test("runs recorded into one encoder run in order, each from its own feed offset", async () => {
  const gpu = await getGpu();
  const { device } = gpu;
  // Three steps' inputs, 4 values each; every step reads its region and the previous output.
  const steps = device.createBuffer({
    size: 48,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  device.queue.writeBuffer(steps, 0, Float32Array.from({ length: 12 }, (_, i) => i + 1));
  const history = device.createBuffer({
    size: 48,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  const g = new Graph();
  const x = g.input([4], "f32", "x");
  const carry = g.input([4], "f32", "carry");
  const y = add(scale(x, 2), carry);
  const exe = await compileGraph(gpu, [y], "step");
  await exe.run(new Map([[carry, new Float32Array(4)]]));
  const encoder = device.createCommandEncoder();
  for (let step = 0; step < 3; step++) {
    await exe.run(
      new Map<Tensor, Feed>([
        [x, { source: steps, offset: step * 16 }],
        ...(step > 0 ? [[carry, exe.buffer(y)] as const] : []),
      ]),
      { encoder, after: (e) => e.copyBufferToBuffer(exe.buffer(y), 0, history, step * 16, 16) },
    );
  }
  // Nothing ran yet: the caller submits.
  device.queue.submit([encoder.finish()]);
  const [got] = await readBuffers(device, [
    { buffer: history, bytes: 48 },
  ]);
  const want: number[] = [];
  let sum = [0, 0, 0, 0];
  for (let step = 0; step < 3; step++) {
    sum = sum.map((c, i) => c + 2 * (step * 4 + i + 1));
    want.push(...sum);
  }
  assertEquals(Array.from(new Float32Array(got)), want);
  await assertRejects(
    () => exe.run(new Map([[x, new Float32Array(4)]]), { encoder: device.createCommandEncoder() }),
    Error,
    "input x[4]:f32 is fed host data, expected a GPU buffer",
  );
  exe.destroy();
  steps.destroy();
  history.destroy();
});

Deno.test("wrong feeds are rejected with the tensor named", async () => {
  const gpu = await getGpu();
  const g = new Graph();
  const x = g.input([4], "f32", "tokens");
  const exe = await compileGraph(gpu, [exp(x)]);
  await assertRejects(
    () => exe.run(new Map([[x, new Float32Array(3)]])),
    Error,
    "input tokens[4]:f32 needs 4 values, received 3",
  );
  const other = new Graph().input([4]);
  await assertRejects(
    () => exe.run(new Map([[other, new Float32Array(4)]])),
    Error,
    "not an input",
  );
  exe.destroy();
});

Deno.test("shape errors name the op and shapes", () => {
  const g = new Graph();
  assertThrows(() => add(g.input([3, 4]), g.input([5])), Error, "Cannot broadcast [3,4] with [5]");
  assertThrows(() => reshape(g.input([3, 4]), [5]), Error, "Cannot reshape");
  assertThrows(() => g.input([3, 0]), Error, "positive integer dimensions");
});

for (const clock of ["timestamps", "wall"] as const) {
  Deno.test(`${clock} timing runs every dispatch and reports one entry per dispatch`, async () => {
    const gpu = await getGpu();
    if (!gpu.hasTimestamps) {
      throw new Error("the test adapter is expected to offer timestamp-query");
    }
    const g = new Graph();
    const x = g.input([64]);
    const y = exp(scale(exp(x), 0.1));
    const exe = await compileGraph(gpu, [y]);
    const xv = uniformArray(64, 3);
    gpu.device.queue.writeBuffer(exe.buffer(x), 0, xv);
    const times = await runTimed(gpu, exe.dispatches, undefined, undefined, { clock });
    assertEquals(times.map((t) => t.label), [
      "unary.forward:OP=1,WG=256",
      "unary.forward:OP=0,WG=256",
      "unary.forward:OP=1,WG=256",
    ]);
    for (const t of times) assertEquals(t.micros >= 0 && Number.isFinite(t.micros), true);
    const [out] = await exe.read([y]);
    assertClose(out, xv.map((v) => Math.exp(0.1 * Math.exp(v))), { rtol: 1e-5, label: clock });
    exe.destroy();
  });
}

Deno.test("timing a graph of more dispatches than one query set holds runs all of them", async () => {
  const gpu = await getGpu();
  const g = new Graph();
  const x = g.input([8]);
  let y = x;
  for (let i = 0; i < 2100; i++) y = scale(y, 1.0005); // 4200 timestamps: above 4096 per set
  const exe = await compileGraph(gpu, [y]);
  const xv = Float32Array.from({ length: 8 }, (_, i) => i - 3);
  gpu.device.queue.writeBuffer(exe.buffer(x), 0, xv);
  const times = await runTimed(gpu, exe.dispatches, undefined, undefined, {
    clock: "timestamps",
  });
  assertEquals(times.length, 2100);
  assertEquals(times.every((t) => t.micros > 0 && Number.isFinite(t.micros)), true);
  const [out] = await exe.read([y]);
  assertClose(out, xv.map((v) => v * 1.0005 ** 2100), { atol: 1e-5, rtol: 1e-4, label: "chain" });
  exe.destroy();
});

Deno.test("launches with `before` copies run between other dispatches, in every run", async () => {
  const gpu = await getGpu();
  const g = new Graph();
  // x is past the fill kernel's limit (16384 texels): copied into its texture before the
  // matmul's launch; w, 2 z and v are filled by copy kernels in the pass.
  const x = g.input([37, 1772], "f32", "x");
  const w = g.input([28, 1772], "f32", "w");
  const v = g.input([28, 8], "f32", "v");
  const variant = "texture_32x16";
  const z = matmul(add(x, x), w, { transB: true, variant });
  const y = scale(matmul(add(z, z), v, { variant }), 0.5);
  const exe = await compileGraph(gpu, [y], "before");
  assertEquals(
    exe.dispatches.map((d) => `${d.label.split(/[.:]/)[0]}${d.before ? " after copies" : ""}`),
    [
      "binary",
      "copy_to_texture",
      "matmul_texture after copies",
      "binary",
      "copy_to_texture",
      "copy_to_texture",
      "matmul_texture",
      "unary",
    ],
  );
  const expected = (xv: Float32Array, wv: Float32Array, vv: Float32Array) => {
    const zr = matmulRef(xv.map((e) => 2 * e), wv, { m: 37, k: 1772, n: 28, transB: true });
    return matmulRef(zr, vv, { m: 37, k: 28, n: 8 }); // 0.5 * (2 z) @ v
  };
  const feeds = (
    seed: number,
  ) => [uniformArray(37 * 1772, seed), uniformArray(28 * 1772, seed + 1)];
  const vv = uniformArray(28 * 8, 9);
  for (const seed of [1, 3]) {
    const [xv, wv] = feeds(seed);
    await exe.run(new Map([[x, xv], [w, wv], [v, vv]]));
    const [out] = await exe.read([y]);
    assertClose(out, expected(xv, wv, vv), { atol: 1e-4, rtol: 1e-4, label: `run ${seed}` });
  }
  // The RFT_DEBUG=2 path (one timed pass per dispatch) records the copies too.
  const [xv, wv] = feeds(5);
  gpu.device.queue.writeBuffer(exe.buffer(x), 0, xv);
  gpu.device.queue.writeBuffer(exe.buffer(w), 0, wv);
  await runTimed(gpu, exe.dispatches);
  const [out] = await exe.read([y]);
  assertClose(out, expected(xv, wv, vv), { atol: 1e-4, rtol: 1e-4, label: "timed run" });
  exe.destroy();
});

Deno.test("a binding of the wrong kind is rejected naming the binding", async () => {
  const gpu = await getGpu();
  const buffer = gpu.device.createBuffer({ size: 256, usage: GPUBufferUsage.STORAGE });
  const texture = gpu.device.createTexture({
    size: [4, 4],
    format: "rgba32float",
    usage: GPUTextureUsage.TEXTURE_BINDING,
  });
  const spec = {
    shader: "matmul_texture",
    entryPoint: "main",
    bindings: ["texture", "texture", "read_write"] as const,
    params: true,
  };
  const view = texture.createView();
  await assertRejects(
    () => prepareDispatch(gpu, spec, [view, buffer, buffer], packParams({}), [1, 1, 1]),
    Error,
    'Cannot prepare kernel "matmul_texture.main": binding 1 is a texture, expected a ' +
      "GPUTextureView, received a buffer",
  );
  await assertRejects(
    () => prepareDispatch(gpu, spec, [view, view, view], packParams({}), [1, 1, 1]),
    Error,
    'binding 2 is a "read_write" storage buffer, expected a buffer, received a GPUTextureView',
  );
  buffer.destroy();
  texture.destroy();
});

import { assertEquals, assertThrows } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { getGpu, type GpuContext } from "../../src/gpu/device.ts";
import { VariableTextures } from "../../src/gpu/variable_textures.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import { matmul } from "../../src/ops/matmul.ts";
import { matmulRef } from "../../src/reference/matmul.ts";
import { uniformArray } from "../../src/util/random.ts";

/** A weight variable "w" of `shape` holding `data`, in a buffer texture kernels may copy. */
function weightVariable(gpu: GpuContext, data: Float32Array<ArrayBuffer>, shape: number[]) {
  const buffer = gpu.device.createBuffer({
    label: "w",
    size: data.byteLength,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  gpu.device.queue.writeBuffer(buffer, 0, data);
  return { name: "w", shape, dtype: "f32" as const, buffer };
}

Deno.test("VariableTextures: one texture per source buffer, shape and layout, destroyed at the last release", async () => {
  const { device } = await getGpu();
  const textures = new VariableTextures(device);
  const buffer = (label: string) =>
    device.createBuffer({ label, size: 64, usage: GPUBufferUsage.COPY_SRC });
  const [a, b] = [buffer("a"), buffer("b")];
  const shape = (width: number): GPUTextureDescriptor => ({
    size: [width, 1],
    format: "rgba32float",
    usage: GPUTextureUsage.TEXTURE_BINDING | GPUTextureUsage.COPY_DST,
  });
  const first = textures.acquire(a, shape(4), "first", "linear");
  assertEquals(textures.acquire(a, shape(4), "again", "linear") === first, true);
  const wider = textures.acquire(a, shape(8), "wider", "linear");
  const other = textures.acquire(b, shape(4), "other", "linear");
  // The same size in another layout (e.g. a square weight packed for the NT and the NN product).
  const packed = textures.acquire(a, shape(4), "packed", "packed 4x4 B^T");
  assertEquals(
    [wider === first, other === first, packed === first, textures.size],
    [false, false, false, 4],
  );
  textures.release(first);
  assertEquals(textures.size, 4, "one holder of the first texture is left");
  textures.release(first);
  textures.release(wider);
  textures.release(packed);
  assertEquals(textures.size, 1);
  assertThrows(() => textures.release(first), Error, "not a held variable texture");
  textures.release(other);
  assertEquals(textures.size, 0);
  a.destroy();
  b.destroy();
});

Deno.test("texture matmuls of one weight share its texture across launches and graphs", async () => {
  const gpu = await getGpu();
  // Odd M; K and N multiples of 4, as the texture variant needs. Forced: a GPU's autotune (or
  // its untimed default for problems this small) picks a storage variant.
  const [m, k, n] = [3, 20, 132]; // the weight's 132 rows span two packed blocks
  const wData = uniformArray(n * k, 5);
  const xData = uniformArray(m * k, 6);
  const weight = weightVariable(gpu, wData, [n, k]);
  const { buffer } = weight;
  // (x W^T) W: two products reading the same weight, one transposed (as forward and backward).
  const xw = matmulRef(xData, wData, { m, k, n, transB: true });
  const expected = matmulRef(xw, wData, { m, k: n, n: k });
  const compile = async () => {
    const g = new Graph();
    const w = g.variable(weight);
    const x = g.input([m, k], "f32", "x");
    const variant = "texture_4x16";
    const y = matmul(matmul(x, w, { transB: true, variant }), w, { variant });
    const exe = await compileGraph(gpu, [y], "shared-weight");
    return { exe, x, y };
  };
  const check = async (graph: Awaited<ReturnType<typeof compile>>, label: string) => {
    await graph.exe.run(new Map([[graph.x, xData]]));
    const [y] = await graph.exe.read([graph.y]);
    assertClose(y, expected, { rtol: 1e-5, atol: 1e-5, label });
  };
  const held = gpu.variableTextures.size;
  const first = await compile();
  const labels = first.exe.dispatches.map((d) => d.label.split(":")[0]);
  assertEquals(
    labels,
    ["pack_weight", "copy_to_texture", "matmul_texture", "copy_to_texture", "matmul_texture"],
    "one pack, two products (each filling its small A first)",
  );
  assertEquals(gpu.variableTextures.size, held + 1, "one texture for both launches");
  await check(first, "first graph");
  const second = await compile();
  assertEquals(gpu.variableTextures.size, held + 1, "the second graph shares it too");
  await check(second, "second graph");
  first.exe.destroy();
  assertEquals(gpu.variableTextures.size, held + 1, "still held by the second graph");
  // New weights, announced: the second graph's run packs them into the texture it still holds.
  const doubled = Float32Array.from(wData, (v) => 2 * v);
  gpu.device.queue.writeBuffer(buffer, 0, doubled);
  gpu.variableTextures.written(buffer);
  await second.exe.run(new Map([[second.x, xData]]));
  const [y] = await second.exe.read([second.y]);
  assertClose(y, expected.map((v) => 4 * v), { rtol: 1e-5, atol: 1e-5, label: "new weights" });
  second.exe.destroy();
  assertEquals(gpu.variableTextures.size, held);
  buffer.destroy();
});

Deno.test("a weight whose copy would pass the weight textures' budget is read from its buffer", async () => {
  const gpu = await getGpu();
  const [m, k, n] = [5, 32, 36];
  const wData = uniformArray(n * k, 7);
  const xData = uniformArray(m * k, 8);
  const expected = matmulRef(xData, wData, { m, k, n, transB: true });
  const weight = weightVariable(gpu, wData, [n, k]);
  const { buffer } = weight;
  // The weight's own copy takes its buffer's bytes or more (texture rows are padded).
  const copies = { none: 0, room: 2 ** 20, tight: wData.byteLength - 1 };
  const used: Record<string, string> = {};
  for (const [name, budget] of Object.entries(copies)) {
    const textures = new VariableTextures(gpu.device, budget);
    const g = new Graph();
    const x = g.input([m, k], "f32", "x");
    const y = matmul(x, g.variable(weight), { transB: true });
    const exe = await compileGraph({ ...gpu, variableTextures: textures }, [y], "budget");
    await exe.run(new Map([[x, xData]]));
    const [out] = await exe.read([y]);
    assertClose(out, expected, { rtol: 1e-5, atol: 1e-5, label: name });
    used[name] = textures.size === 0 ? "buffer" : "texture";
    assertEquals(textures.bytes <= budget, true, `${name}: ${textures.bytes} bytes held`);
    exe.destroy();
  }
  // A CPU adapter's default for a weight product is a texture kernel (a GPU's a storage one).
  const withRoom = gpu.summary.isFallback ? "texture" : "buffer";
  assertEquals(used, { none: "buffer", room: withRoom, tight: "buffer" });
  buffer.destroy();
});

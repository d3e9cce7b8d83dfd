import { assertEquals } from "../_asserts.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { readVariablePieces, readVariables } from "../../src/graph/read_variables.ts";
import type { Variable } from "../../src/graph/tensor.ts";
import { uniformArray } from "../../src/util/random.ts";
import { toBf16 } from "../../src/util/half.ts";

/** A variable `name` holding `bytes` (its values as stored). */
function variable(
  device: GPUDevice,
  name: string,
  shape: number[],
  dtype: "f32" | "bf16",
  bytes: Uint8Array,
) {
  const buffer = device.createBuffer({
    label: name,
    size: Math.ceil(bytes.byteLength / 4) * 4,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  const padded = new Uint8Array(buffer.size);
  padded.set(bytes);
  device.queue.writeBuffer(buffer, 0, padded);
  return { name, shape, dtype, buffer } satisfies Variable;
}

Deno.test("readVariablePieces: variables in order, in pieces of at most the given bytes, equal to one readback", async () => {
  const { device } = await getGpu();
  const f32 = uniformArray(1003, 1);
  const half = toBf16(uniformArray(999, 2)); // an odd count: the last word half used
  const vars = [
    variable(device, "a", [17, 59], "f32", new Uint8Array(f32.buffer)),
    variable(device, "b", [27, 37], "bf16", new Uint8Array(half.buffer)),
  ];
  const pieces: Float32Array[] = [];
  for await (const piece of readVariablePieces(device, vars, 400)) pieces.push(piece);
  // 4012 bytes of f32 in 400-byte pieces: 11; 1998 bytes of bf16: 5 (widened to 200 values each).
  assertEquals(pieces.map((p) => p.length), [
    ...Array(10).fill(100),
    3,
    ...Array(4).fill(200),
    199,
  ]);
  const whole = await readVariables(device, vars);
  const joined = (from: number, to: number) =>
    Float32Array.from(pieces.slice(from, to).flatMap((p) => [...p]));
  assertEquals(joined(0, 11), whole.get("a")!);
  assertEquals(joined(11, 16), whole.get("b")!);
  vars.forEach((v) => v.buffer.destroy());
});

import { getGpu } from "../../src/gpu/device.ts";
import { readF32 } from "../../src/gpu/readback.ts";
import { openCheckpoint, writeCheckpoint } from "../../src/model/safetensors.ts";
import { loadVariable, type RawTensor, uploadTensor } from "../../src/model/upload.ts";
import { bf16ToF32, f16ToF32 } from "../../src/reference/convert.ts";
import { mulberry32 } from "../../src/util/random.ts";
import { assertEquals, assertRejects } from "../_asserts.ts";

/** Asserts bit-identical f32 arrays, except that any NaN matches any NaN. */
function assertSameBits(actual: Float32Array, expected: Float32Array, label: string) {
  assertEquals(actual.length, expected.length, `${label}: length`);
  const a = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
  const e = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== e[i] && !(Number.isNaN(actual[i]) && Number.isNaN(expected[i]))) {
      throw new Error(
        `${label}: index ${i}: got ${actual[i]} (0x${a[i].toString(16)}), expected ${
          expected[i]
        } (0x${e[i].toString(16)})`,
      );
    }
  }
}

/** Uploads 16-bit patterns `bits` as `dtype` and reads the f32 result back. */
async function convert(
  dtype: "F16" | "BF16",
  bits: Uint16Array<ArrayBuffer>,
  maxBindingBytes?: number,
) {
  const gpu = await getGpu();
  const bytes = new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength);
  const variable = await uploadTensor(gpu, { name: "w", dtype, shape: [bits.length], bytes }, {
    maxBindingBytes,
  });
  try {
    assertEquals([variable.name, variable.dtype, variable.shape], ["w", "f32", [bits.length]]);
    return await readF32(gpu.device, variable.buffer, bits.length);
  } finally {
    variable.buffer.destroy();
  }
}

Deno.test("reference: F16 and BF16 special values decode as IEEE defines them", () => {
  const f16 = f16ToF32([0x0000, 0x8000, 0x3c00, 0xc000, 0x7bff, 0x0001, 0x03ff, 0x0400, 0x7c00]);
  assertEquals([...f16], [0, -0, 1, -2, 65504, 2 ** -24, 1023 * 2 ** -24, 2 ** -14, Infinity]);
  assertEquals([...f16ToF32([0xfc00, 0x7e00, 0x7c01])].map(String), ["-Infinity", "NaN", "NaN"]);
  const bf16 = bf16ToF32([0x8000, 0x3f80, 0x4049, 0x0001, 0x0080, 0xff80, 0x7fc0]);
  assertEquals(
    [...bf16].map(String),
    ["0", "1", "3.140625", String(Math.fround(2 ** -133)), String(2 ** -126), "-Infinity", "NaN"],
  );
  assertEquals(Object.is(bf16[0], -0), true);
  assertEquals(bf16ToF32([0x7f7f])[0], 3.3895313892515355e38);
});

// Every 16-bit pattern plus one: an odd count, so the last packed word is half used.
const ALL_PATTERNS = Uint16Array.from({ length: 65537 }, (_, i) => i & 0xffff);

for (const [dtype, reference] of [["F16", f16ToF32], ["BF16", bf16ToF32]] as const) {
  Deno.test(`upload ${dtype}: every bit pattern converts on the GPU exactly as the CPU`, async () => {
    assertSameBits(await convert(dtype, ALL_PATTERNS), reference(ALL_PATTERNS), dtype);
  });

  Deno.test(`upload ${dtype}: a tensor over the binding limit converts in aligned chunks`, async () => {
    // 1 KiB bindings hold 256 f32 values: 2501 elements take 10 launches, the last one odd.
    const random = mulberry32(7);
    const bits = Uint16Array.from({ length: 2501 }, () => Math.floor(random() * 65536));
    assertSameBits(await convert(dtype, bits, 1024), reference(bits), `${dtype} chunked`);
  });
}

Deno.test("upload F32: bytes are copied as they are, NaN payloads included", async () => {
  const gpu = await getGpu();
  const data = new Float32Array(5);
  new Uint32Array(data.buffer).set([0x7fc00123, 0x80000000, 0x00000001, 0xff800000, 0x3f800000]);
  const bytes = new Uint8Array(data.buffer);
  const variable = await uploadTensor(gpu, { name: "x", dtype: "F32", shape: [5, 1], bytes });
  const back = await readF32(gpu.device, variable.buffer, 5);
  variable.buffer.destroy();
  assertEquals(new Uint32Array(back.buffer), new Uint32Array(data.buffer));
});

Deno.test("upload: unsupported dtypes, wrong sizes and tiny binding limits are rejected", async () => {
  const gpu = await getGpu();
  const tensor: RawTensor = { name: "w", dtype: "F16", shape: [3], bytes: new Uint8Array(6) };
  await assertRejects(
    () => uploadTensor(gpu, { ...tensor, dtype: "I8" }),
    Error,
    `Cannot upload to the GPU: tensor "w" has dtype "I8"; expected F32, F16, BF16`,
  );
  await assertRejects(
    () => uploadTensor(gpu, { ...tensor, shape: [4] }),
    Error,
    `tensor "w" has 6 bytes; F16 shape [4] needs 8`,
  );
  await assertRejects(
    () => uploadTensor(gpu, tensor, { maxBindingBytes: 100 }),
    Error,
    "a storage binding limit of 100 bytes is below",
  );
});

Deno.test("loadVariable: a written checkpoint lands on the GPU unchanged", async () => {
  const gpu = await getGpu();
  const dir = await Deno.makeTempDir({ prefix: "rft-upload-" });
  try {
    const data = Float32Array.from({ length: 33 }, (_, i) => Math.sin(i));
    await writeCheckpoint(dir, [{ name: "embed", shape: [3, 11], data }]);
    const checkpoint = await openCheckpoint(dir);
    const variable = await loadVariable(gpu, checkpoint, "embed");
    const back = await readF32(gpu.device, variable.buffer, 33);
    variable.buffer.destroy();
    assertEquals([variable.shape, back], [[3, 11], data]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadVariable: an unsupported dtype is named with its file before any data is read", async () => {
  const gpu = await getGpu();
  const dir = await Deno.makeTempDir({ prefix: "rft-upload-" });
  try {
    const header = new TextEncoder().encode(
      JSON.stringify({ "embed": { dtype: "I8", shape: [2], data_offsets: [0, 2] } }),
    );
    const file = new Uint8Array(8 + header.length + 2);
    file[0] = header.length;
    file.set(header, 8);
    await Deno.writeFile(`${dir}/model.safetensors`, file);
    await assertRejects(
      async () => loadVariable(gpu, await openCheckpoint(dir), "embed"),
      Error,
      `Cannot load ${dir}/model.safetensors: tensor "embed" has dtype "I8"; expected F32, F16, BF16`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

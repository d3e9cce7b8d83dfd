/**
 * Narrowing f32 variables into bf16 / f16 ones on the GPU: bit patterns equal the formula
 * reference and the host packers on ties, overflow, f16 subnormals, zeros of both signs,
 * infinities, NaN and random values, over an odd length (the last word half used).
 */

import { assertEquals } from "../_asserts.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { encodeDispatches, releaseDispatch } from "../../src/gpu/dispatch.ts";
import { readBuffers } from "../../src/gpu/readback.ts";
import { uploadTensor } from "../../src/model/upload.ts";
import { narrowingDispatch } from "../../src/model/half_copy.ts";
import { f32ToBf16, f32ToF16 } from "../../src/reference/convert.ts";
import { toBf16, toF16 } from "../../src/util/half.ts";
import { uniformArray } from "../../src/util/random.ts";

const SPECIAL = [
  0,
  -0,
  1,
  -1,
  1 + 2 ** -11,
  1 + 3 * 2 ** -11,
  1 + 2 ** -8,
  1 + 3 * 2 ** -8, // ties (f16, bf16)
  65504,
  65520,
  1e6,
  -1e6, // f16 max, the first value rounding to infinity, overflow
  6.1e-5,
  2 ** -24,
  2 ** -25,
  3 * 2 ** -26,
  1e-8,
  2 ** -14 * (1 - 2 ** -11), // f16 subnormals
  3.4e38,
  1e-40,
  Infinity,
  -Infinity,
  NaN,
];

Deno.test("narrowing f32 to bf16 and f16 on the GPU rounds to nearest even, as the host does", async () => {
  const gpu = await getGpu();
  const values = new Float32Array([...SPECIAL, ...uniformArray(1001, 9, -70000, 70000)]);
  const random = uniformArray(500, 10, -4, 4);
  const all = new Float32Array([...values, ...random]); // odd length
  const source = await uploadTensor(gpu, {
    name: "w",
    dtype: "F32",
    shape: [all.length],
    bytes: new Uint8Array(all.buffer),
  });
  for (const format of ["bf16", "f16"] as const) {
    const target = {
      name: "w16",
      shape: [all.length],
      dtype: format,
      buffer: gpu.device.createBuffer({
        size: Math.ceil(all.length / 2) * 4,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
      }),
    };
    const dispatch = await narrowingDispatch(gpu, source, target);
    const encoder = gpu.device.createCommandEncoder();
    encodeDispatches(encoder, [dispatch], "narrow");
    gpu.device.queue.submit([encoder.finish()]);
    releaseDispatch(dispatch);
    const [raw] = await readBuffers(gpu.device, [{
      buffer: target.buffer,
      bytes: target.buffer.size,
    }]);
    const got = [...new Uint16Array(raw).subarray(0, all.length)];
    const reference = format === "bf16" ? f32ToBf16(all) : f32ToF16(all);
    const host = format === "bf16" ? toBf16(all) : toF16(all);
    const nan = (bits: number) =>
      format === "bf16"
        ? (bits & 0x7f80) === 0x7f80 && (bits & 0x7f) !== 0
        : (bits & 0x7c00) === 0x7c00 && (bits & 0x3ff) !== 0;
    got.forEach((bits, i) => {
      if (nan(reference[i])) {
        assertEquals(nan(bits) && nan(host[i]), true, `${format} NaN at ${i}`);
        return;
      }
      assertEquals(bits, reference[i], `${format} ${all[i]} (index ${i})`);
      assertEquals(host[i], reference[i], `${format} host ${all[i]} (index ${i})`);
    });
    target.buffer.destroy();
  }
  source.buffer.destroy();
});

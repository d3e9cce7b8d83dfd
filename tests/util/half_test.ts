/** The broadcast's bfloat16 packing against the reference decoder (`src/reference/convert.ts`). */

import { assertEquals } from "../_asserts.ts";
import { fromBf16, toBf16 } from "../../src/util/half.ts";
import { bf16ToF32 } from "../../src/reference/convert.ts";

Deno.test("bf16 packing rounds to nearest even and widens back exactly", () => {
  const values = new Float32Array([0, -0, 1, -2.5, 1 / 3, 65504, 1e-40, Infinity, -Infinity, NaN]);
  const bits = toBf16(values);
  // Exact bf16 values come back unchanged; 1/3 rounds to the nearest bf16 (0x3eab).
  assertEquals([...bits.slice(0, 5)], [0x0000, 0x8000, 0x3f80, 0xc020, 0x3eab]);
  assertEquals([...fromBf16(bits)], [...bf16ToF32(bits)]);
  const back = fromBf16(bits);
  assertEquals(Number.isNaN(back[9]), true);
  assertEquals([back[7], back[8]], [Infinity, -Infinity]);
  // Ties go to even: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7.
  assertEquals([...toBf16(new Float32Array([1 + 2 ** -8, 1 + 3 * 2 ** -8]))], [0x3f80, 0x3f82]);
});

/**
 * How a weight's 32-bit words hold its values, and the code the shaders take for it (their
 * `B_FORMAT`, `SRC_FORMAT` or `FORMAT` override; `shaders/lib/half_weights.wgsl` widens the
 * halves): f32, or bfloat16 / IEEE binary16 two per word (element 2i in the low half).
 */

/** A weight's storage format. */
export type WeightFormat = "f32" | "bf16" | "f16";

/** The shaders' code of `format`: 0 f32, 1 bf16, 2 f16. */
export function weightFormatCode(format: WeightFormat): number {
  return ["f32", "bf16", "f16"].indexOf(format);
}

/**
 * CPU reference of an operand texture's image (`shaders/copy_to_texture.wgsl` and the copy
 * commands of `src/ops/operand_texture.ts`): values as linear rgba32float texels, texel t at
 * (t % width, t / width).
 */

/** The image of a `width` x `rows` texture holding `values` as linear texels; the rest 0. */
export function linearTextureRef(
  values: ArrayLike<number>,
  width: number,
  rows: number,
): Float32Array {
  if (values.length > width * rows * 4) {
    throw new Error(`Cannot lay out ${values.length} values in ${width} x ${rows} texels`);
  }
  const image = new Float32Array(width * rows * 4);
  for (let e = 0; e < values.length; e++) {
    const t = Math.floor(e / 4);
    image[((t / width | 0) * width + (t % width)) * 4 + (e % 4)] = values[e];
  }
  return image;
}

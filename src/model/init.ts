/**
 * Seeded random initialisation of a model created from scratch (HF's defaults: normal(0, 0.02)
 * for matrices and embeddings, ones for norm weights, zeros for biases). Host arrays only; the
 * policy uploads them.
 */

import { shapeSize } from "../graph/tensor.ts";
import { mulberry32 } from "../util/random.ts";
import type { ModelConfig } from "./hf_config.ts";
import { type ParameterSpec, parameterSpecs } from "./parameters.ts";

/** Standard deviation of the normal init (HF `initializer_range`). */
export const INIT_STD = 0.02;

/** Fresh parameters for `cfg`, by HF name, reproducible from `seed`. */
export function initParameters(
  cfg: ModelConfig,
  seed: number,
  std = INIT_STD,
): Map<string, Float32Array<ArrayBuffer>> {
  const params = new Map<string, Float32Array<ArrayBuffer>>();
  for (const [spec, data] of initParameterStream(cfg, seed, std)) params.set(spec.name, data);
  return params;
}

/**
 * The parameters of {@link initParameters} one at a time, in `parameterSpecs` order (the same
 * values), so a writer can hold one tensor at a time.
 */
export function* initParameterStream(
  cfg: ModelConfig,
  seed: number,
  std = INIT_STD,
): Generator<[ParameterSpec, Float32Array<ArrayBuffer>]> {
  const next = mulberry32(seed);
  const normal = () => {
    // Box-Muller; 1 - u keeps the log argument in (0, 1].
    const u = 1 - next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
  };
  for (const spec of parameterSpecs(cfg)) {
    const data = new Float32Array(shapeSize(spec.shape));
    if (spec.init === "ones") data.fill(1);
    if (spec.init === "normal") { for (let i = 0; i < data.length; i++) data[i] = std * normal(); }
    yield [spec, data];
  }
}

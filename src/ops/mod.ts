/** All graph ops in one namespace (`ops.matmul`, `ops.softmax`, ...), re-exported by mod.ts. */

export { add, binary, type BinaryKind, div, mul, sub } from "./binary.ts";
export { expandTo, sumTo } from "./broadcast.ts";
export { reshape } from "./reshape.ts";
export {
  affine,
  exp,
  gelu,
  log,
  neg,
  relu,
  scale,
  sigmoid,
  silu,
  sqrt,
  square,
  tanh,
  unary,
  type UnaryKind,
} from "./unary.ts";
export { matmul, type MatmulOptions } from "./matmul.ts";
export { maxLast, meanLast, type ReduceKind, reduceLast, sumLast } from "./reduce.ts";
export { logSoftmax, softmax } from "./softmax.ts";
export { embedding } from "./embedding.ts";
export { tokenEntropy, tokenLogprobs } from "./token_logprobs.ts";
export { layerNorm } from "./layernorm.ts";
export { rmsNorm } from "./rmsnorm.ts";
export { rope, ropeInvFreq } from "./rope.ts";
export { padLast, sliceLast } from "./slice.ts";
export { type AttentionOptions, causalAttention } from "./attention.ts";
export { cachedAttention } from "./cached_attention.ts";
export { writeKvCache } from "./kv_cache.ts";
export { packedRopeKvCache, ropeKvCache, type RopeKvCacheResult } from "./rope_kv_cache.ts";
export { stopGradient } from "./stop_gradient.ts";

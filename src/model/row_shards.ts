/**
 * Weights stored in row shards. Every kernel binds a tensor whole, so a weight larger than one
 * storage binding of the device (Qwen2.5-0.5B's 151936 x 896 embedding is 544 MB; Mesa's CPU
 * adapter binds 128 MiB) is kept as consecutive row ranges, each its own GPU variable named
 * `<HF name>#<k>`. Only the vocabulary-sized weights (token embedding, LM head) are sharded: the
 * graph builders gather token rows per shard and join the LM head's logits along the vocabulary.
 * The HF tensor is split on upload and merged on readback, so checkpoints keep HF names.
 */

import type { ParameterSpec } from "./parameters.ts";

/** The variable name of shard `k` of weight `name`. */
export function shardName(name: string, k: number): string {
  return `${name}#${k}`;
}

/** The HF weight a variable name belongs to (itself when it is not a shard's). */
export function weightOfShard(variable: string): string {
  const hash = variable.lastIndexOf("#");
  return hash < 0 ? variable : variable.slice(0, hash);
}

/**
 * Rows per shard of parameter `spec` [rows, cols] (f32) when one storage binding holds
 * `limitBytes`: undefined when it fits whole or may not be sharded (only `shardable` ones may),
 * else the row count of each shard (all full but the last).
 */
export function shardRows(
  { shape, shardable }: Pick<ParameterSpec, "shape" | "shardable">,
  limitBytes: number,
): number[] | undefined {
  const [rows, cols] = shape;
  if (!shardable || shape.length !== 2 || rows * cols * 4 <= limitBytes) return undefined;
  const fit = Math.floor(limitBytes / (cols * 4));
  if (fit < 1) return undefined;
  const counts: number[] = [];
  for (let left = rows; left > 0; left -= fit) counts.push(Math.min(fit, left));
  return counts;
}

/**
 * `parameters` by variable name with each sharded weight's shards concatenated back under its
 * HF name (shards in index order).
 */
export function mergeShards(
  parameters: ReadonlyMap<string, Float32Array<ArrayBuffer>>,
): Map<string, Float32Array<ArrayBuffer>> {
  const merged = new Map<string, Float32Array<ArrayBuffer>>();
  const pieces = new Map<string, [number, Float32Array<ArrayBuffer>][]>();
  for (const [name, data] of parameters) {
    const weight = weightOfShard(name);
    if (weight === name) merged.set(name, data);
    else {pieces.set(weight, [...(pieces.get(weight) ?? []), [
        Number(name.slice(weight.length + 1)),
        data,
      ]]);}
  }
  for (const [weight, indexed] of pieces) {
    const parts = indexed.sort((a, b) => a[0] - b[0]).map(([, data]) => data);
    const whole = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
    let offset = 0;
    for (const part of parts) {
      whole.set(part, offset);
      offset += part.length;
    }
    merged.set(weight, whole);
  }
  return merged;
}

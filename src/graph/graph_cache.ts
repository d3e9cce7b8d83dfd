/**
 * The cache every owner of compiled graphs keeps them in: by shape key, a few at a time. A
 * dropped graph returns its buffers to the pool, which is then trimmed (its size classes rarely
 * fit the next shape's), and releases its textures.
 */

import type { GpuContext } from "../gpu/device.ts";
import { LruCache } from "../util/lru_cache.ts";
import type { Executable } from "./executable.ts";

/** Compiled graphs by key, at most `capacity`, freed when dropped. */
export function graphCache<G extends { exe: Executable }>(
  gpu: GpuContext,
  capacity: number,
): LruCache<G> {
  return new LruCache<G>(capacity, (graph) => {
    graph.exe.destroy();
    gpu.pool.trim();
  });
}

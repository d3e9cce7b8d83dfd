/**
 * Autotune choices shipped with rft for adapters we have measured (`tuning_tables/*.json`: the
 * CPU adapter of a 2-core machine under both of Deno's Linux backends, Mesa's lavapipe on Vulkan
 * and llvmpipe on GL, and an H100 on Vulkan), so that a first run on such an adapter compiles no
 * candidate kernels. A table applies when the adapter key matches exactly, and for a CPU adapter
 * also the count of CPU threads (the variants split work across them). The choices of a user's own
 * cache, measured on their machine, come first; see `autotune.ts`.
 */

import llvmpipeVulkan from "./tuning_tables/llvmpipe_vulkan_2threads.json" with { type: "json" };
import llvmpipeGl from "./tuning_tables/llvmpipe_gl_2threads.json" with { type: "json" };
import h100Vulkan from "./tuning_tables/h100_vulkan.json" with { type: "json" };
import type { TuneChoice } from "./autotune.ts";

/** A shipped table: the adapter it was measured on and its choices by cache key. */
export interface TuningTable {
  version: 1;
  /** The adapter key (`vendor/description/backend`) the entries were measured on. */
  adapter: string;
  /** CPU threads of the machine, for CPU adapters (absent for GPUs). */
  cpuThreads?: number;
  /** How the table was made. */
  source: string;
  entries: Record<string, TuneChoice>;
}

/** Every shipped table. */
export const TUNING_TABLES: readonly TuningTable[] = [
  llvmpipeVulkan as TuningTable,
  llvmpipeGl as TuningTable,
  h100Vulkan as TuningTable,
];

/**
 * The shipped tables that apply to `adapter` (its autotune key) on a machine of `cpuThreads`
 * threads; `cpuAdapter` says whether the adapter runs on the CPU.
 */
export function tablesFor(
  adapter: string,
  cpuAdapter: boolean,
  cpuThreads = navigator.hardwareConcurrency,
  tables: readonly TuningTable[] = TUNING_TABLES,
): TuningTable[] {
  return tables.filter((t) =>
    t.adapter === adapter && (!cpuAdapter || t.cpuThreads === undefined ||
      t.cpuThreads === cpuThreads)
  );
}

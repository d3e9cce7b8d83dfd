/**
 * Subgroups: the probe's verdict on crafted outputs (right sizes, sums and shuffles; each kind of
 * wrong answer), and on this adapter a device that was granted `subgroups` either passes the probe
 * or reports the feature unusable, consistently with `GpuContext.hasSubgroups`.
 */

import { getGpu } from "../../src/gpu/device.ts";
import { probeHolds, SUBGROUPS, subgroupsWork } from "../../src/gpu/subgroups.ts";
import { assertEquals } from "../_asserts.ts";

/** What a working device writes for `invocations` invocations in subgroups of `size`. */
function working(invocations: number, size: number): Uint32Array {
  const out = new Uint32Array(3 * invocations);
  for (let i = 0; i < invocations; i++) out.set([size, size, (i % size) ^ 1], 3 * i);
  return out;
}

Deno.test("subgroup probe: accepts working subgroups, rejects wrong sizes, sums and shuffles", () => {
  assertEquals(probeHolds(working(64, 8), 8, 8), true, "size 8");
  assertEquals(probeHolds(working(64, 32), 4, 128), true, "size 32 within 4..128");
  assertEquals(probeHolds(working(64, 32), 8, 16), false, "size above the adapter's maximum");
  const badSum = working(64, 8);
  badSum[3 * 5 + 1] = 7;
  assertEquals(probeHolds(badSum, 8, 8), false, "a wrong sum");
  const badShuffle = working(64, 8);
  badShuffle[3 * 6 + 2] = 6;
  assertEquals(probeHolds(badShuffle, 8, 8), false, "a shuffle that brought its own lane");
  assertEquals(probeHolds(new Uint32Array(0), 8, 8), false, "no output");
});

Deno.test("subgroups: a granted feature is used only where the probe passes", async () => {
  const gpu = await getGpu();
  const granted = gpu.device.features.has(SUBGROUPS);
  const [min, max] = gpu.summary.subgroupSizes;
  const works = await subgroupsWork(gpu.device, min, max);
  assertEquals(gpu.hasSubgroups, granted && works, "hasSubgroups = granted and probed");
  if (!granted) assertEquals(works, false, "no probe without the feature");
});

/**
 * What a benchmark script keeps: with `--json FILE`, its results in one JSON file stamped with
 * the adapter, the Deno version and the date, so runs can be tracked and compared; and how its
 * figures are written in tables. Measures nothing itself (tables: `_table.ts`).
 */

import type { GpuContext } from "../src/gpu/device.ts";

/**
 * Writes `results` of benchmark `bench` to `file` as JSON, after the adapter summary, the Deno
 * version and the date.
 *
 * @example
 * ```ts
 * await writeJsonReport("out/train.json", "train", gpu, { results });
 * ```
 */
export async function writeJsonReport(
  file: string,
  bench: string,
  gpu: GpuContext,
  results: Record<string, unknown>,
): Promise<void> {
  const report = {
    bench,
    adapter: gpu.summary,
    deno: Deno.version.deno,
    date: new Date().toISOString(),
    ...results,
  };
  await Deno.writeTextFile(file, JSON.stringify(report, null, 2) + "\n");
  console.log(`wrote ${file}`);
}

/** `value` written for a table cell: about 3 significant digits, at most 3 decimals. */
export function figure(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const magnitude = Math.abs(value);
  const decimals = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3;
  return value.toFixed(decimals);
}

/**
 * Prints `measured <what>: <row>` on stderr as soon as one row is measured (numbers as
 * {@link figure} writes them), so a run stopped before its table still shows what it measured.
 */
export function reportMeasured(what: string, row: object): void {
  const text = JSON.stringify(row, (_key, v) => (typeof v === "number" ? Number(figure(v)) : v));
  console.error(`  measured ${what}: ${text}`);
}

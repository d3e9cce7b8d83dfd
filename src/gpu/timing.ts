/**
 * Per-dispatch GPU timing, switched on by `RFT_DEBUG=2`: on a GPU each dispatch gets its own
 * compute pass with begin/end timestamps, and one line per dispatch is printed after the submit;
 * on a CPU adapter (whose timestamps can close a pass before its work is done) or without
 * timestamps, each dispatch is its own submit timed by wall clock. Copies recorded before a
 * dispatch (variable copies included) are not timed. Off by default; costs one extra readback per
 * timed run, or a wait per dispatch.
 */

import type { GpuContext } from "./device.ts";
import {
  encodeDispatch,
  encodeLaunchCommands,
  type EncodeOptions,
  type EncoderCommands,
  type PreparedDispatch,
} from "./dispatch.ts";
import { readBuffers } from "./readback.ts";

/** The debug level from `RFT_DEBUG` (0 when unset). */
export function debugLevel(): number {
  const raw = Deno.env.get("RFT_DEBUG");
  const level = raw ? Number(raw) : 0;
  return Number.isFinite(level) ? level : 0;
}

/** Time of one dispatch, in microseconds. */
export interface DispatchTime {
  label: string;
  micros: number;
}

/** How {@link runTimed} times: GPU timestamps, or wall clock around a submit per dispatch. */
export type DispatchClock = "timestamps" | "wall";

/** Options of {@link runTimed}. */
export interface TimingOptions extends EncodeOptions {
  /** Default: wall clock on CPU adapters and without the `timestamp-query` feature. */
  clock?: DispatchClock;
}

/** The most queries one timestamp query set may hold (WebGPU's limit). */
const MAX_QUERIES_PER_SET = 4096;

/**
 * Encodes `dispatches` one pass each with timestamps (between the `before` and `after`
 * commands), submits, and returns their GPU times; on CPU adapters and without timestamps, each
 * dispatch in a submit of its own, timed by wall clock ({@link runWallTimed}). A dispatch's own
 * `before` commands are recorded ahead of its pass, so its time leaves them out; with
 * `skipVariableCopies` its variable copies are left out, and so are dispatches that only copy
 * variables (no time is listed for them). The `timestamps` clock needs the `timestamp-query`
 * feature.
 * Graphs of more than 2048 dispatches use several query sets (one set that large would be
 * invalid, and so would the whole submit).
 */
export async function runTimed(
  gpu: GpuContext,
  dispatches: readonly PreparedDispatch[],
  before?: EncoderCommands,
  after?: EncoderCommands,
  options: TimingOptions = {},
): Promise<DispatchTime[]> {
  if (options.skipVariableCopies) dispatches = dispatches.filter((d) => !d.variableCopy);
  const clock = options.clock ??
    (gpu.hasTimestamps && !gpu.summary.isFallback ? "timestamps" : "wall");
  if (clock === "wall") return runWallTimed(gpu, dispatches, before, after, options);
  if (!gpu.hasTimestamps) throw new Error("Cannot time dispatches: no timestamp-query feature");
  const { device } = gpu;
  const perSet = MAX_QUERIES_PER_SET / 2;
  const sets = Array.from({ length: Math.ceil(dispatches.length / perSet) }, (_, s) => {
    const count = 2 * Math.min(perSet, dispatches.length - s * perSet);
    return {
      count,
      querySet: device.createQuerySet({ type: "timestamp", count }),
      resolve: device.createBuffer({
        size: count * 8,
        usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
      }),
    };
  });
  const encoder = device.createCommandEncoder({ label: "timed" });
  before?.(encoder);
  dispatches.forEach((d, i) => {
    encodeLaunchCommands(encoder, d, options);
    const at = i % perSet;
    const pass = encoder.beginComputePass({
      label: d.label,
      timestampWrites: {
        querySet: sets[Math.floor(i / perSet)].querySet,
        beginningOfPassWriteIndex: 2 * at,
        endOfPassWriteIndex: 2 * at + 1,
      },
    });
    encodeDispatch(pass, d);
    pass.end();
  });
  after?.(encoder);
  for (const { querySet, resolve, count } of sets) {
    encoder.resolveQuerySet(querySet, 0, count, resolve, 0);
  }
  device.queue.submit([encoder.finish()]);
  const raw = await readBuffers(
    device,
    sets.map(({ resolve, count }) => ({ buffer: resolve, bytes: count * 8 })),
  );
  for (const { querySet, resolve } of sets) {
    querySet.destroy();
    resolve.destroy();
  }
  const stamps = raw.map((r) => new BigUint64Array(r));
  return dispatches.map((d, i) => {
    const set = stamps[Math.floor(i / perSet)];
    const at = i % perSet;
    return { label: d.label, micros: Number(set[2 * at + 1] - set[2 * at]) / 1000 };
  });
}

/**
 * {@link runTimed} by wall clock: the `before` commands, then each dispatch's own commands (its
 * copies) and then the dispatch, each in a submit of its own awaited to its end, the dispatch's
 * wall clock less an empty submit's ({@link submitLatency}), then the `after` commands.
 */
async function runWallTimed(
  gpu: GpuContext,
  dispatches: readonly PreparedDispatch[],
  before: EncoderCommands | undefined,
  after: EncoderCommands | undefined,
  options: EncodeOptions,
): Promise<DispatchTime[]> {
  const latency = await submitLatency(gpu);
  const times: DispatchTime[] = [];
  if (before) await wallMicros(gpu, before);
  for (const d of dispatches) {
    await wallMicros(gpu, (encoder) => encodeLaunchCommands(encoder, d, options));
    const micros = await wallMicros(gpu, (encoder) => {
      const pass = encoder.beginComputePass({ label: d.label });
      encodeDispatch(pass, d);
      pass.end();
    });
    times.push({ label: d.label, micros: Math.max(0, micros - latency) });
  }
  if (after) await wallMicros(gpu, after);
  return times;
}

/** Wall-clock microseconds from submitting what `encode` records to the submit's end. */
export async function wallMicros(gpu: GpuContext, encode: (encoder: GPUCommandEncoder) => void) {
  const encoder = gpu.device.createCommandEncoder({ label: "timed" });
  encode(encoder);
  const start = performance.now();
  gpu.device.queue.submit([encoder.finish()]);
  await gpu.device.queue.onSubmittedWorkDone();
  return (performance.now() - start) * 1000;
}

const latencies = new WeakMap<GPUDevice, Promise<number>>();

/** The fastest of five empty submits' wall-clock microseconds on `gpu` (measured once). */
export function submitLatency(gpu: GpuContext): Promise<number> {
  let latency = latencies.get(gpu.device);
  if (!latency) {
    latency = (async () => {
      let best = Infinity;
      for (let i = 0; i < 5; i++) best = Math.min(best, await wallMicros(gpu, () => {}));
      return best;
    })();
    latencies.set(gpu.device, latency);
  }
  return latency;
}

/** Prints one line per dispatch time, as `RFT_DEBUG=2` promises. */
export function printTimes(times: readonly DispatchTime[], title: string): void {
  const total = times.reduce((s, t) => s + t.micros, 0);
  console.error(`[rft] ${title}: ${times.length} dispatches, ${total.toFixed(0)} us on GPU`);
  times.forEach((t, i) =>
    console.error(`[rft]   #${i} ${t.label.padEnd(48)} ${t.micros.toFixed(1).padStart(10)} us`)
  );
}

/**
 * Picks the fastest of several kernel variants by timing them on the device, per adapter, op
 * and shape class, and remembers the choice in memory and in `autotune.json` in the cache dir.
 * Choices shipped for measured adapters (`tuning_tables.ts`) serve where the cache has none.
 * Tuning what remains is bounded: at most `RFT_AUTOTUNE_SECONDS` (default 120) per process, then
 * the caller's default serves (and is not cached: a later run tunes it), and it says so in a
 * progress line (`tuning kernels for this adapter, first run only: ...`). `RFT_AUTOTUNE=0` skips
 * timing and uses the caller's default. Knows nothing of specific ops: callers describe
 * candidates as prepared dispatches.
 */

import { beginActivity } from "../util/activity.ts";
import { printLine, printUpdatingLine } from "../util/status_lines.ts";
import { adapterKey, type GpuContext } from "./device.ts";
import { encodeDispatches, type PreparedDispatch, releaseDispatch } from "./dispatch.ts";
import { readBuffers } from "./readback.ts";
import { submitLatency, wallMicros } from "./timing.ts";
import { tablesFor } from "./tuning_tables.ts";

/** One variant to time: prepares the dispatches of one run on buffers the caller owns. */
export interface TuneCandidate {
  name: string;
  prepare(): Promise<PreparedDispatch[]>;
}

/** What to tune: the candidates for one op and shape class, and the default when not timing. */
export interface TuneRequest {
  op: string;
  /** A short key for the shapes that share a choice, e.g. `m512n512k512`. */
  shapeClass: string;
  candidates: readonly TuneCandidate[];
  /** Name of the candidate to use when timing is disabled (the heuristic default). */
  fallback: string;
  /** Cache file to read and update; default {@link autotuneCachePath}. */
  cacheFile?: string;
}

/** A remembered autotune decision. */
export interface TuneChoice {
  adapter: string;
  op: string;
  shapeClass: string;
  choice: string;
  /** Microseconds per run of each timed candidate. */
  micros: Record<string, number>;
  /** Every candidate of the measurement (absent in entries saved before it was recorded). */
  candidates?: string[];
  /** ISO time of the measurement. */
  at: string;
}

interface CacheFile {
  version: 1;
  entries: Record<string, TuneChoice>;
}

const memory = new Map<string, TuneChoice>();
const shipped = new Map<string, TuneChoice>();
const inFlight = new Map<string, Promise<string>>();
const loadedFiles = new Set<string>();
const loadedAdapters = new Set<string>();

/** Whether autotuning times candidates (`RFT_AUTOTUNE` is not `0`). */
export function autotuneEnabled(): boolean {
  return Deno.env.get("RFT_AUTOTUNE") !== "0";
}

/** The autotune cache file: `$RFT_CACHE_DIR`, `$XDG_CACHE_HOME/rft` or `~/.cache/rft`. */
export function autotuneCachePath(): string {
  const env = (name: string) => Deno.env.get(name) || undefined;
  const dir = env("RFT_CACHE_DIR") ??
    (env("XDG_CACHE_HOME") ? `${env("XDG_CACHE_HOME")}/rft` : `${env("HOME") ?? "."}/.cache/rft`);
  return `${dir}/autotune.json`;
}

/**
 * Every choice known in this process (measured here or loaded from the cache file; with `gpu`,
 * the shipped ones of its adapter too), only those of `gpu`'s adapter when given, sorted by op
 * and shape class.
 */
export function autotuneChoices(gpu?: GpuContext): TuneChoice[] {
  loadDisk(autotuneCachePath());
  if (gpu) loadShipped(gpu);
  const adapter = gpu && adapterKey(gpu);
  const all = new Map([...shipped, ...memory]);
  return [...all.values()]
    .filter((c) => !adapter || c.adapter === adapter)
    .sort((x, y) => `${x.op}|${x.shapeClass}`.localeCompare(`${y.op}|${y.shapeClass}`));
}

/** How many choices the shipped tables hold for `gpu`'s adapter (0: none applies). */
export function shippedChoiceCount(gpu: GpuContext): number {
  loadShipped(gpu);
  const adapter = adapterKey(gpu);
  return [...shipped.values()].filter((c) => c.adapter === adapter).length;
}

/**
 * Returns the name of the fastest candidate of `req` on this adapter: remembered if known from
 * a measurement among the same candidates or more, otherwise timed now (and remembered; a new
 * candidate gets its chance); the fallback when `RFT_AUTOTUNE=0`.
 */
export function autotune(gpu: GpuContext, req: TuneRequest): Promise<string> {
  const names = req.candidates.map((c) => c.name);
  if (!names.includes(req.fallback)) {
    throw new Error(
      `Cannot autotune "${req.op}": fallback "${req.fallback}" is not a candidate (${
        names.join(", ")
      })`,
    );
  }
  if (!autotuneEnabled() || names.length === 1) return Promise.resolve(req.fallback);
  const key = `${adapterKey(gpu)}|${req.op}|${req.shapeClass}`;
  const cacheFile = req.cacheFile ?? autotuneCachePath();
  loadDisk(cacheFile);
  if (!req.cacheFile) loadShipped(gpu);
  // A measurement serves while it covers every candidate (a new one gets its chance); a shipped
  // one while its choice is still a candidate (new variants do not undo a first run's tables).
  const measured = memory.get(key) ?? memory.get(legacyKey(gpu, req));
  const shippedChoice = req.cacheFile ? undefined : shipped.get(key);
  if (
    measured && names.includes(measured.choice) &&
    names.every((n) => measured.candidates?.includes(n))
  ) {
    return Promise.resolve(measured.choice);
  }
  if (shippedChoice && names.includes(shippedChoice.choice)) {
    return Promise.resolve(shippedChoice.choice);
  }
  let pending = inFlight.get(key);
  if (!pending) {
    if (budgetSpent()) return Promise.resolve(req.fallback);
    pending = measureWithProgress(gpu, req).then((choice) => {
      if (!choice) return req.fallback; // the budget ran out: not remembered, tuned next run
      memory.set(key, choice);
      saveDisk(cacheFile, key, choice);
      return choice.choice;
    }).finally(() => inFlight.delete(key));
    inFlight.set(key, pending);
  }
  return pending;
}

/**
 * The key caches written before the backend was inferred used for this adapter and request
 * (`.../default` when `DENO_WEBGPU_BACKEND` was unset): their measurements still serve it.
 */
function legacyKey(gpu: GpuContext, req: TuneRequest): string {
  const { vendor, description, backendSource } = gpu.summary;
  return backendSource === "inferred"
    ? `${vendor}/${description}/default|${req.op}|${req.shapeClass}`
    : "";
}

/** Seconds of tuning one process spends at most: `RFT_AUTOTUNE_SECONDS`, default 120. */
export function autotuneBudgetSeconds(): number {
  const raw = Deno.env.get("RFT_AUTOTUNE_SECONDS");
  const value = raw === undefined || raw === "" ? 120 : Number(raw);
  return Number.isFinite(value) && value >= 0 ? value : 120;
}

/** Tuning done in this process: seconds spent, shape classes tuned, whether the stop was said. */
const tuning = { seconds: 0, classes: 0, stopSaid: false, lastLine: -Infinity };

/** Whether this process has spent its tuning budget (saying so once, the first time). */
function budgetSpent(): boolean {
  const budget = autotuneBudgetSeconds();
  if (tuning.seconds < budget) return false;
  if (!tuning.stopSaid) {
    tuning.stopSaid = true;
    printLine(
      `kernel tuning stopped at its budget of ${budget} s (RFT_AUTOTUNE_SECONDS): shapes not ` +
        "tuned yet use default variants in this run and are tuned in the next",
    );
  }
  return true;
}

/** How often (ms) a progress line of tuning is printed at most. */
const TUNING_LINE_EVERY_MS = 5000;

/**
 * {@link measure}, counted against the budget, as an activity with a progress line; undefined
 * when the budget ran out before every candidate was compiled.
 */
async function measureWithProgress(
  gpu: GpuContext,
  req: TuneRequest,
): Promise<TuneChoice | undefined> {
  const started = performance.now();
  tuning.classes++;
  const budget = autotuneBudgetSeconds();
  const label = "tuning kernels for this adapter, first run only";
  using activity = beginActivity(label, req.candidates.length);
  const spent = () => tuning.seconds + (performance.now() - started) / 1000;
  const next = (done: number) => {
    activity.progress(done, `${req.op} ${req.shapeClass}`);
    if (done > 0 && spent() >= budget) return false;
    const now = performance.now();
    if (now - tuning.lastLine >= TUNING_LINE_EVERY_MS) {
      tuning.lastLine = now;
      printUpdatingLine(
        `${label}: ${done}/${req.candidates.length} variants of shape ${tuning.classes} ` +
          `(${req.op} ${req.shapeClass}); ${Math.round(spent())} s of at most ${budget} s`,
      );
    }
    return true;
  };
  try {
    return await measure(gpu, req, next);
  } finally {
    tuning.seconds += (performance.now() - started) / 1000;
    if (tuning.seconds >= budget) budgetSpent();
  }
}

/** Rounds of timing per candidate, interleaved; the best round counts (the GPU may be shared). */
const ROUNDS = 3;

/**
 * Microseconds of work each timing of a candidate aims at, as repetitions in one submit (at most
 * {@link MAX_REPS}): on CPU adapters a timing is the wall clock less a submit's ~10 ms latency,
 * whose jitter drowns a short product (10 reps of a 150 us decode product once ranked a variant
 * 1.4x slower than another first).
 */
const TIMING_MICROS = 50_000;
const MAX_REPS = 100;

/**
 * How much faster than the caller's default a candidate must time to replace it: on a shared
 * machine one lucky round can make a slower variant look a few percent faster, and the default
 * is the variant expected to win.
 */
export const FALLBACK_MARGIN = 0.05;

/**
 * The candidate to keep from best times in microseconds: the fastest, unless `fallback` is within
 * {@link FALLBACK_MARGIN} of it.
 */
export function pickFastest(micros: Readonly<Record<string, number>>, fallback: string): string {
  const [fastest, best] = Object.entries(micros).reduce((a, e) => (e[1] < a[1] ? e : a));
  const kept = micros[fallback];
  return kept !== undefined && kept <= best * (1 + FALLBACK_MARGIN) ? fallback : fastest;
}

/**
 * Compiles and times every candidate of `req`; `next(done)` is asked before each candidate's
 * compile, and a false answer (the budget ran out) ends the measurement with undefined.
 */
async function measure(
  gpu: GpuContext,
  req: TuneRequest,
  next: (done: number) => boolean,
): Promise<TuneChoice | undefined> {
  const micros: Record<string, number> = {};
  const prepared = new Map<string, { dispatches: PreparedDispatch[]; reps: number }>();
  try {
    for (const [index, candidate] of req.candidates.entries()) {
      if (!next(index)) return undefined;
      let dispatches: PreparedDispatch[] = [];
      try {
        dispatches = await candidate.prepare();
        const once = await timeDispatches(gpu, dispatches, 1); // compiles and warms up
        const reps = Math.max(1, Math.min(MAX_REPS, Math.round(TIMING_MICROS / Math.max(once, 1))));
        prepared.set(candidate.name, { dispatches, reps });
      } catch (err) {
        dispatches.forEach(releaseDispatch);
        console.error(
          `rft: autotune of "${req.op}" skips "${candidate.name}": ${(err as Error).message}`,
        );
      }
    }
    next(req.candidates.length);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, { dispatches, reps }] of prepared) {
        const t = await timeDispatches(gpu, dispatches, reps);
        micros[name] = Math.min(micros[name] ?? Infinity, t);
      }
    }
  } finally {
    for (const { dispatches } of prepared.values()) dispatches.forEach(releaseDispatch);
  }
  const timed = Object.entries(micros);
  if (timed.length === 0) {
    throw new Error(`Cannot autotune "${req.op}" (${req.shapeClass}): every candidate failed`);
  }
  const choice = pickFastest(micros, req.fallback);
  return {
    adapter: adapterKey(gpu),
    op: req.op,
    shapeClass: req.shapeClass,
    choice,
    micros,
    candidates: req.candidates.map((c) => c.name),
    at: new Date().toISOString(),
  };
}

/**
 * Microseconds per repetition of `dispatches`, encoded `reps` times in one compute pass and one
 * submit (see {@link timeEncoded}).
 */
export function timeDispatches(
  gpu: GpuContext,
  dispatches: readonly PreparedDispatch[],
  reps: number,
): Promise<number> {
  const all = Array.from({ length: reps }, () => dispatches).flat();
  return timeEncoded(gpu, (encoder) => encodeDispatches(encoder, all, "autotune"), reps);
}

/**
 * Microseconds per repetition of the GPU work `encode` records (`reps` repetitions of it) in one
 * submit: from GPU timestamps on a GPU that has them; else, and on CPU adapters, by wall clock
 * around the submit and `onSubmittedWorkDone` less that of an empty submit
 * ({@link submitLatency}). lavapipe's timestamps can close a pass before its dispatches finish
 * (seen with textures written by a storage-texture dispatch in an earlier submit, then read:
 * ~5 us reported for a dispatch of 1.5 ms of wall clock).
 */
export async function timeEncoded(
  gpu: GpuContext,
  encode: (encoder: GPUCommandEncoder) => void,
  reps: number,
): Promise<number> {
  if (!gpu.hasTimestamps || gpu.summary.isFallback) {
    const latency = await submitLatency(gpu);
    return Math.max(0, (await wallMicros(gpu, encode)) - latency) / reps;
  }
  const { device } = gpu;
  const encoder = device.createCommandEncoder({ label: "timed" });
  // Empty passes before and after carry the timestamps, so the timed work is encoded as usual.
  const querySet = device.createQuerySet({ type: "timestamp", count: 2 });
  const resolved = device.createBuffer({
    size: 16,
    usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
  });
  encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 0 } }).end();
  encode(encoder);
  encoder.beginComputePass({ timestampWrites: { querySet, endOfPassWriteIndex: 1 } }).end();
  encoder.resolveQuerySet(querySet, 0, 2, resolved, 0);
  device.queue.submit([encoder.finish()]);
  const [raw] = await readBuffers(device, [{ buffer: resolved, bytes: 16 }]);
  querySet.destroy();
  resolved.destroy();
  const [begin, end] = new BigUint64Array(raw);
  return Number(end - begin) / 1000 / reps;
}

function readCacheFile(path: string): CacheFile {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return { version: 1, entries: {} }; // no file yet, or no permission: start empty
  }
  try {
    const parsed = JSON.parse(text) as CacheFile;
    if (parsed?.version === 1 && typeof parsed.entries === "object") return parsed;
  } catch {
    // fall through: a damaged file is replaced on the next save
  }
  console.error(`rft: ignoring autotune cache "${path}": expected version 1 JSON`);
  return { version: 1, entries: {} };
}

/** Takes the shipped choices of `gpu`'s adapter (once per adapter; none when tuning is off). */
function loadShipped(gpu: GpuContext): void {
  const adapter = adapterKey(gpu);
  if (loadedAdapters.has(adapter) || !autotuneEnabled()) return;
  loadedAdapters.add(adapter);
  for (const table of tablesFor(adapter, gpu.summary.isFallback)) {
    for (const [key, entry] of Object.entries(table.entries)) shipped.set(key, entry);
  }
}

function loadDisk(path: string): void {
  if (loadedFiles.has(path) || !autotuneEnabled()) return;
  loadedFiles.add(path);
  for (const [key, entry] of Object.entries(readCacheFile(path).entries)) {
    if (!memory.has(key)) memory.set(key, entry);
  }
}

/** Merges `key` into the cache file, writing a temp file and renaming it over the old one. */
function saveDisk(path: string, key: string, choice: TuneChoice): void {
  const dir = path.slice(0, path.lastIndexOf("/"));
  try {
    Deno.mkdirSync(dir, { recursive: true });
    const file = readCacheFile(path);
    file.entries[key] = choice;
    const temp = `${path}.${Deno.pid}.${crypto.randomUUID()}.tmp`;
    Deno.writeTextFileSync(temp, JSON.stringify(file, null, 2) + "\n");
    Deno.renameSync(temp, path);
  } catch (err) {
    console.error(`rft: cannot save autotune cache "${path}": ${(err as Error).message}`);
  }
}

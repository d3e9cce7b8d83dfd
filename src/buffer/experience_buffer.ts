/**
 * The experience buffer between explorer and trainer: a bounded async queue whose `put` waits
 * while it is full (back-pressure) and persists each accepted batch as a parquet part before it
 * resolves, and whose `take` waits for enough experiences. It drops stale experiences, rejects
 * ones from a future policy version, can replay experiences by Trinity's `linear_decay`
 * priority, and resumes from its directory, never handing out an experience twice.
 */

import { Notifier } from "../util/notifier.ts";
import { writeAtomic } from "../util/write_atomic.ts";
import { type Experience, validateExperience } from "./experience.ts";
import { readExperienceDir, type ReadWarning, writeExperiencePart } from "./experience_io.ts";

/** Replay (Trinity's priority queue): experiences are reused, highest priority first. */
export interface ReplayOptions {
  /**
   * Trinity's `linear_decay` priority is `policyVersion - decay * useCount`: newer experiences
   * first, each use pushing one back. Default 0.1.
   */
  decay?: number;
  /** Milliseconds a taken experience waits before it can be taken again. Default 0. */
  reuseCooldownMs?: number;
  /** Uses after which an experience is retired. Default: unlimited (eviction bounds the size). */
  maxUseCount?: number;
}

/** Options of {@link ExperienceBuffer.open}. */
export interface ExperienceBufferOptions {
  /**
   * Most experiences held. Without replay a `put` waits until its batch fits; with replay a
   * `put` never waits and the lowest-priority experiences are evicted instead.
   */
  capacity: number;
  /**
   * A taken experience whose `policyVersion` is below the current version minus this is
   * dropped instead of handed out. Default: unlimited.
   */
  maxStaleness?: number;
  /**
   * The current policy version (e.g. of the checkpoint resumed from). Experiences of a later
   * version, put or restored, are rejected. Default 0.
   */
  policyVersion?: number;
  /** Reuse experiences by priority; absent: each experience is taken once, in put order. */
  replay?: ReplayOptions;
  /**
   * Eids retired at open without being handed out: the experiences of an explore step whose
   * cursor was never saved (a kill between their put and it), which the explorer explores again.
   */
  discard?: readonly string[];
}

/** What one `put` did with its batch. */
export interface PutResult {
  /** Experiences stored (and persisted). */
  accepted: number;
  /** Experiences of a policy version later than the current one, not stored. */
  rejected: number;
  /** Experiences evicted (replay only) to get back under capacity, new ones included. */
  evicted: number;
}

/** Counters and sizes for logging; counts are since this buffer was opened. */
export interface BufferMetrics {
  /** Experiences held, cooling ones included. */
  size: number;
  /** Experiences that a `take` could hand out now. */
  available: number;
  capacity: number;
  /** Experiences restored from the directory at open. */
  restored: number;
  /** Persisted experiences retired at open as `discard` named them. */
  discarded: number;
  accepted: number;
  /** Experiences handed out (a replayed one counts each time). */
  taken: number;
  droppedStale: number;
  rejectedFuture: number;
  evicted: number;
  /** Mean of `currentVersion - policyVersion` over the experiences handed out; 0 before any. */
  meanStalenessTaken: number;
}

/** One experience held by the buffer. */
interface Entry {
  exp: Experience;
  /** Order of arrival: the FIFO order and the tie-break between equal priorities. */
  seq: number;
  useCount: number;
  /** Taken and waiting out the reuse cooldown. */
  cooling: boolean;
}

/** The state file: experiences never to hand out again and use counts of replayed ones. */
interface BufferState {
  version: 1;
  /** Eids consumed, dropped, rejected or evicted. */
  retired: string[];
  /** Use counts of held experiences that were taken at least once (replay). */
  useCounts: Record<string, number>;
}

/** Name of the state file in the buffer's directory. */
export const BUFFER_STATE_FILE = "buffer_state.json";

/**
 * A bounded queue of experiences backed by a directory of parquet parts plus a state file,
 * both written atomically. Open with {@link ExperienceBuffer.open}; one buffer per directory.
 * Delivery is at most once: a `take` records what it hands out before it resolves.
 */
export class ExperienceBuffer {
  readonly #dir: string;
  readonly #capacity: number;
  readonly #maxStaleness: number;
  readonly #replay: Required<ReplayOptions> | undefined;
  #version: number;
  readonly #entries = new Map<string, Entry>();
  readonly #retired: Set<string>;
  /** Slots held by puts whose part is being written (no replay). */
  #reserved = 0;
  #seq = 0;
  #closed = false;
  /** Wakes everyone waiting for a change (a take, a put, close, a cooldown's end). */
  readonly #changes = new Notifier();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  /** The latest state write; writes run one after another, each of the state when it runs. */
  #stateWrite: Promise<void> = Promise.resolve();
  readonly #counts = {
    restored: 0,
    discarded: 0,
    accepted: 0,
    taken: 0,
    droppedStale: 0,
    rejectedFuture: 0,
    evicted: 0,
    stalenessSum: 0,
  };
  /** What reading the directory at open skipped (unreadable parts, temporary files). */
  readonly restoreWarnings: readonly ReadWarning[];

  private constructor(
    dir: string,
    options: ExperienceBufferOptions,
    retired: Set<string>,
    warnings: ReadWarning[],
  ) {
    this.#dir = dir;
    this.#capacity = options.capacity;
    this.#maxStaleness = options.maxStaleness ?? Infinity;
    this.#version = options.policyVersion ?? 0;
    this.#replay = options.replay && {
      decay: options.replay.decay ?? 0.1,
      reuseCooldownMs: options.replay.reuseCooldownMs ?? 0,
      maxUseCount: options.replay.maxUseCount ?? Infinity,
    };
    this.#retired = retired;
    this.restoreWarnings = warnings;
  }

  /**
   * Opens the buffer of `dir` (created if missing), restoring every persisted experience not yet
   * retired; those `discard` names are retired, restored ones from a future policy version are
   * rejected, and replay evicts down to capacity. Throws on bad options or an unreadable state
   * file.
   */
  static async open(dir: string, options: ExperienceBufferOptions): Promise<ExperienceBuffer> {
    checkOptions(options);
    await Deno.mkdir(dir, { recursive: true });
    const state = await readState(`${dir}/${BUFFER_STATE_FILE}`);
    const read = await readExperienceDir(dir);
    const buffer = new ExperienceBuffer(dir, options, new Set(state.retired), read.warnings);
    const discard = new Set(options.discard);
    const fresh = read.experiences.filter((exp) => !buffer.#retired.has(exp.info.eid));
    const discarded = fresh.filter((exp) => discard.has(exp.info.eid));
    for (const exp of discarded) buffer.#retire(exp.info.eid);
    buffer.#counts.discarded = discarded.length;
    const { accepted, rejected } = buffer.#admit(fresh.filter((e) => !discard.has(e.info.eid)));
    for (const entry of accepted) entry.useCount = state.useCounts[entry.exp.info.eid] ?? 0;
    buffer.#counts.restored = accepted.length;
    const evicted = buffer.#evictOverCapacity();
    if (rejected.length || evicted || discarded.length) await buffer.#persistState();
    return buffer;
  }

  /**
   * The eids the buffer of `dir` has retired (handed out, dropped or evicted), as its state file
   * records them: what a checkpoint stores so that a resume can {@link rewind} to it.
   */
  static async retired(dir: string): Promise<string[]> {
    return (await readState(`${dir}/${BUFFER_STATE_FILE}`)).retired;
  }

  /**
   * Before the buffer of `dir` is opened: makes its record of retired experiences `retired` (a
   * checkpoint's; none: nothing consumed), so experiences whose training was lost with a killed
   * process are handed out again.
   */
  static async rewind(dir: string, retired: readonly string[]): Promise<void> {
    await Deno.mkdir(dir, { recursive: true });
    const state: BufferState = { version: 1, retired: [...retired], useCounts: {} };
    await writeAtomic(`${dir}/${BUFFER_STATE_FILE}`, JSON.stringify(state) + "\n");
  }

  /** The current policy version. */
  get policyVersion(): number {
    return this.#version;
  }

  /** Sets the current policy version (after a weight sync); it may not go back. */
  setPolicyVersion(version: number): void {
    if (!Number.isInteger(version) || version < this.#version) {
      throw new Error(
        `Cannot set the buffer's policy version: expected an integer >= ${this.#version}, ` +
          `received ${version}`,
      );
    }
    this.#version = version;
    this.#changes.notify();
  }

  /** Whether `eid` was ever stored here (held, or retired after use). */
  has(eid: string): boolean {
    return this.#entries.has(eid) || this.#retired.has(eid);
  }

  /**
   * Stores `exps` after validating them; those of a later policy version are rejected. Without
   * replay, waits until the batch fits (a batch larger than the capacity is an error). Resolves
   * once the batch is persisted as a part. Throws when the buffer is or gets closed first.
   */
  async put(exps: readonly Experience[]): Promise<PutResult> {
    exps.forEach((exp, i) => validateExperience(exp, `#${i} put into the buffer at ${this.#dir}`));
    this.#checkOpen("put");
    const seen = new Set<string>();
    for (const { info: { eid } } of exps) {
      if (seen.has(eid) || this.#entries.has(eid) || this.#retired.has(eid)) {
        throw new Error(`Cannot put experience ${eid} into the buffer: the eid is already known`);
      }
      seen.add(eid);
    }
    const batch = exps.filter((exp) => exp.info.policyVersion <= this.#version);
    const rejected = exps.length - batch.length;
    this.#counts.rejectedFuture += rejected;
    if (batch.length === 0) return { accepted: 0, rejected, evicted: 0 };
    if (!this.#replay) {
      if (batch.length > this.#capacity) {
        throw new Error(
          `Cannot put ${batch.length} experiences into the buffer: expected at most its ` +
            `capacity, ${this.#capacity}`,
        );
      }
      while (this.#entries.size + this.#reserved + batch.length > this.#capacity) {
        await this.#changes.changed();
        this.#checkOpen("put");
      }
    }
    this.#reserved += batch.length;
    try {
      await writeExperiencePart(this.#dir, batch);
    } finally {
      this.#reserved -= batch.length;
    }
    this.#admit(batch);
    this.#counts.accepted += batch.length;
    const evicted = this.#evictOverCapacity();
    if (evicted) await this.#persistState();
    this.#changes.notify();
    return { accepted: batch.length, rejected, evicted };
  }

  /**
   * Hands out `n` experiences: in put order, or by priority with replay. Stale ones met on the
   * way are dropped. Waits until `n` are available; once the buffer is closed, resolves with
   * what is left (fewer, possibly none), each handed out once more at most (replay included).
   * Rejects with the signal's reason when it aborts.
   */
  async take(n: number, { signal }: { signal?: AbortSignal } = {}): Promise<Experience[]> {
    if (!Number.isInteger(n) || n < 1) {
      throw new Error(`Cannot take from the buffer: expected a count >= 1, received ${n}`);
    }
    for (;;) {
      signal?.throwIfAborted();
      const dropped = this.#dropStale();
      const ready = this.#ready();
      if (ready.length >= n || this.#closed) {
        const chosen = ready.slice(0, n);
        this.#handOut(chosen);
        this.#changes.notify();
        if (chosen.length || dropped) await this.#persistState();
        return chosen.map((entry) => entry.exp);
      }
      await this.#changes.changed(signal);
    }
  }

  /** {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Closes the buffer: waiting puts reject, waiting takes resolve with what is left, cooldown
   * timers stop. Resolves when the state file is written.
   */
  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const entry of this.#entries.values()) entry.cooling = false;
    this.#changes.notify();
    await this.#stateWrite;
  }

  /** Sizes and counters for logging. */
  metrics(): BufferMetrics {
    const { stalenessSum, ...counts } = this.#counts;
    return {
      size: this.#entries.size,
      available: this.#ready().length,
      capacity: this.#capacity,
      ...counts,
      meanStalenessTaken: counts.taken ? stalenessSum / counts.taken : 0,
    };
  }

  /** Adds the experiences not from the future as entries; retires the others. */
  #admit(exps: readonly Experience[]): { accepted: Entry[]; rejected: Experience[] } {
    const accepted: Entry[] = [];
    const rejected: Experience[] = [];
    for (const exp of exps) {
      if (exp.info.policyVersion > this.#version) {
        rejected.push(exp);
        this.#retire(exp.info.eid);
        continue;
      }
      const entry = { exp, seq: this.#seq++, useCount: 0, cooling: false };
      this.#entries.set(exp.info.eid, entry);
      accepted.push(entry);
    }
    this.#counts.rejectedFuture += rejected.length;
    return { accepted, rejected };
  }

  /** Held entries that can be handed out now, in the order they would be. */
  #ready(): Entry[] {
    const ready = [...this.#entries.values()].filter((entry) => !entry.cooling);
    return this.#replay ? ready.sort((a, b) => this.#compare(a, b)) : ready;
  }

  /** Replay order: higher priority first, then earlier arrival. */
  #compare(a: Entry, b: Entry): number {
    return this.#priority(b) - this.#priority(a) || a.seq - b.seq;
  }

  /** Trinity's `linear_decay` priority. */
  #priority(entry: Entry): number {
    return entry.exp.info.policyVersion - this.#replay!.decay * entry.useCount;
  }

  /** Marks `chosen` as taken: retires them, or (replay) counts the use and starts cooldown. */
  #handOut(chosen: readonly Entry[]): void {
    for (const entry of chosen) {
      this.#counts.taken++;
      this.#counts.stalenessSum += this.#version - entry.exp.info.policyVersion;
      entry.useCount++;
      if (!this.#replay || this.#closed || entry.useCount >= this.#replay.maxUseCount) {
        this.#retire(entry.exp.info.eid);
      } else if (this.#replay.reuseCooldownMs > 0) {
        entry.cooling = true;
      }
    }
    const cooling = chosen.filter((entry) => entry.cooling);
    if (cooling.length === 0) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      for (const entry of cooling) entry.cooling = false;
      this.#changes.notify();
    }, this.#replay!.reuseCooldownMs);
    this.#timers.add(timer);
  }

  /** Retires the held entries older than `maxStaleness` allows; returns how many. */
  #dropStale(): number {
    const oldest = this.#version - this.#maxStaleness;
    let dropped = 0;
    for (const [eid, entry] of this.#entries) {
      if (entry.exp.info.policyVersion < oldest) {
        this.#retire(eid);
        dropped++;
      }
    }
    this.#counts.droppedStale += dropped;
    if (dropped) this.#changes.notify();
    return dropped;
  }

  /** Evicts the lowest-priority entries while over capacity (replay); returns how many. */
  #evictOverCapacity(): number {
    if (!this.#replay || this.#entries.size <= this.#capacity) return 0;
    const excess = this.#entries.size - this.#capacity;
    const victims = [...this.#entries.values()].sort((a, b) => this.#compare(a, b)).slice(-excess);
    for (const entry of victims) this.#retire(entry.exp.info.eid);
    this.#counts.evicted += excess;
    return excess;
  }

  #retire(eid: string): void {
    this.#entries.delete(eid);
    this.#retired.add(eid);
  }

  /** Writes the state file after any earlier write; resolves when this one is done. */
  #persistState(): Promise<void> {
    this.#stateWrite = this.#stateWrite.catch(() => {}).then(() => {
      const useCounts: Record<string, number> = {};
      for (const [eid, entry] of this.#entries) if (entry.useCount) useCounts[eid] = entry.useCount;
      const state: BufferState = { version: 1, retired: [...this.#retired], useCounts };
      return writeAtomic(`${this.#dir}/${BUFFER_STATE_FILE}`, JSON.stringify(state));
    });
    return this.#stateWrite;
  }

  #checkOpen(action: string): void {
    if (this.#closed) throw new Error(`Cannot ${action}: the buffer at ${this.#dir} is closed`);
  }
}

function checkOptions(options: ExperienceBufferOptions): void {
  const fail = (key: string, expected: string, value: unknown): never => {
    throw new Error(
      `Invalid experience buffer option "${key}": expected ${expected}, received ${value}`,
    );
  };
  const { capacity, maxStaleness, policyVersion, replay } = options;
  if (!Number.isInteger(capacity) || capacity < 1) fail("capacity", "an integer >= 1", capacity);
  if (maxStaleness !== undefined && !(maxStaleness >= 0)) {
    fail("maxStaleness", "a number >= 0", maxStaleness);
  }
  if (policyVersion !== undefined && !(Number.isInteger(policyVersion) && policyVersion >= 0)) {
    fail("policyVersion", "an integer >= 0", policyVersion);
  }
  if (replay?.decay !== undefined && !Number.isFinite(replay.decay)) {
    fail("replay.decay", "a finite number", replay.decay);
  }
  if (replay?.reuseCooldownMs !== undefined && !(replay.reuseCooldownMs >= 0)) {
    fail("replay.reuseCooldownMs", "a number >= 0", replay.reuseCooldownMs);
  }
  if (replay?.maxUseCount !== undefined && !(replay.maxUseCount >= 1)) {
    fail("replay.maxUseCount", "a number >= 1", replay.maxUseCount);
  }
}

/** The state file at `path`; an empty state when there is none. */
async function readState(path: string): Promise<BufferState> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { version: 1, retired: [], useCounts: {} };
    throw new Error(`Cannot read the buffer state ${path}: ${(err as Error).message}`);
  }
  let state: Partial<BufferState>;
  try {
    state = JSON.parse(text);
  } catch (err) {
    throw new Error(`Cannot read the buffer state ${path}: ${(err as Error).message}`);
  }
  if (
    state?.version !== 1 || !Array.isArray(state.retired) ||
    typeof state.useCounts !== "object" || state.useCounts === null
  ) {
    throw new Error(
      `Cannot read the buffer state ${path}: expected {version: 1, retired, useCounts}, ` +
        `found ${text.slice(0, 60)}`,
    );
  }
  return state as BufferState;
}

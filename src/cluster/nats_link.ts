/**
 * One process's link to a run's NATS JetStream resources: the connection (reconnecting forever
 * with backoff, each disconnect and reconnect logged), and the run's streams, KV bucket and
 * object store, all named after the run's project, name and stage so that every process of one
 * run finds the same ones. Creating them is idempotent: whichever process comes first creates them.
 *
 * - stream `RFT_<run>_TASKS` (work queue): subject `rft.<run>.tasks`, one message per task batch;
 * - stream `RFT_<run>_EXP`: subjects `rft.<run>.exp.batch` (a step's experiences) and
 *   `rft.<run>.exp.done` (a step finished, with its explorer's metrics), deduplicated by
 *   message id over {@link DUPLICATE_WINDOW_S};
 * - KV bucket `rft_<run>`: the published weights version, the task feed, the run state and the
 *   explorer registry;
 * - object store `rft_<run>_weights`: one object per synced weights version.
 */

import { connect, type NatsConnection } from "@nats-io/transport-node";
import {
  jetstream,
  type JetStreamClient,
  type JetStreamManager,
  jetstreamManager,
  type PubAck,
  RetentionPolicy,
} from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import { type ObjectStore, Objm, setSha256Backend } from "@nats-io/obj";

/** Seconds a message id is remembered for deduplication. */
export const DUPLICATE_WINDOW_S = 24 * 3600;

/** Nanoseconds in a second (JetStream durations). */
export const NANOS = 1_000_000_000;

/** Subjects and resource names of one run. */
export interface ClusterNames {
  /** `<project>_<name>_<stage>`, reduced to letters, digits, `_` and `-`. */
  run: string;
  tasksStream: string;
  tasksSubject: string;
  experienceStream: string;
  /** Subject of a step's experiences. */
  batchSubject: string;
  /** Subject of a step's completion record. */
  doneSubject: string;
  bucket: string;
  weights: string;
}

/** The names of stage `stage` of run `project`/`name` (see the file comment). */
export function clusterNames(project: string, name: string, stage: string): ClusterNames {
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, "_");
  const run = `${clean(project)}_${clean(name)}_${clean(stage)}`;
  return {
    run,
    tasksStream: `RFT_${run}_TASKS`,
    tasksSubject: `rft.${run}.tasks`,
    experienceStream: `RFT_${run}_EXP`,
    batchSubject: `rft.${run}.exp.batch`,
    doneSubject: `rft.${run}.exp.done`,
    bucket: `rft_${run}`,
    weights: `rft_${run}_weights`,
  };
}

/** Options of {@link NatsLink.open}. */
export interface NatsLinkOptions {
  /** Server URL(s), e.g. `nats://host:4222`. */
  url: string;
  project: string;
  name: string;
  /** The stage's name. */
  stage: string;
  /** Prints one line (connection losses, retries). */
  log: (line: string) => void;
  /** Gives up waiting for the first connection when it aborts. */
  signal?: AbortSignal;
}

/** First wait between connection attempts, in ms; doubled per failure up to {@link MAX_BACKOFF_MS}. */
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5000;
/** How long an operation is retried before its failure ends the process, in ms. */
const RETRY_LIMIT_MS = 10 * 60_000;

/** A run's NATS resources (see the file comment); `await using` drains the connection. */
export class NatsLink implements AsyncDisposable {
  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly kv: KV,
    readonly weights: ObjectStore,
    readonly names: ClusterNames,
    readonly log: (line: string) => void,
    readonly signal?: AbortSignal,
  ) {}

  /**
   * Connects (retrying with backoff until the server answers, logging each failure) and opens or
   * creates the run's resources.
   */
  static async open(options: NatsLinkOptions): Promise<NatsLink> {
    const { url, log, signal } = options;
    setSha256Backend("native");
    const nc = await connectWithBackoff(url, log, signal);
    watchStatus(nc, url, log);
    const names = clusterNames(options.project, options.name, options.stage);
    const jsm = await jetstreamManager(nc);
    await ensureStream(jsm, {
      name: names.tasksStream,
      subjects: [names.tasksSubject],
      retention: RetentionPolicy.Workqueue,
    });
    await ensureStream(jsm, {
      name: names.experienceStream,
      subjects: [names.batchSubject, names.doneSubject],
      retention: RetentionPolicy.Limits,
      duplicate_window: DUPLICATE_WINDOW_S * NANOS,
    });
    const kv = await new Kvm(nc).create(names.bucket);
    const weights = await new Objm(nc).create(names.weights);
    return new NatsLink(nc, jetstream(nc), jsm, kv, weights, names, log, signal);
  }

  /**
   * Runs `op`, retrying it with backoff while it fails (a lost connection: the client reconnects
   * meanwhile), each failure logged; gives up after {@link RETRY_LIMIT_MS} or once the link is
   * closed. `op` must be safe to repeat (publishes carry message ids, KV writes are whole
   * values).
   */
  async retry<T>(what: string, op: () => Promise<T>): Promise<T> {
    const started = Date.now();
    let wait = FIRST_BACKOFF_MS;
    for (;;) {
      this.signal?.throwIfAborted();
      try {
        return await op();
      } catch (err) {
        if (this.nc.isClosed() || Date.now() - started > RETRY_LIMIT_MS) throw err;
        this.log(`cluster: ${what} failed (${(err as Error).message}); retrying in ${wait} ms`);
        await new Promise((resolve) => setTimeout(resolve, wait));
        wait = Math.min(wait * 2, MAX_BACKOFF_MS);
      }
    }
  }

  /** Publishes `data` on `subject` with message id `id` (deduplicated), retrying. */
  async publish(subject: string, data: string, id: string): Promise<PubAck> {
    return await this.retry(
      `publishing ${id}`,
      () => this.js.publish(subject, data, { msgID: id }),
    );
  }

  /** Reads KV key `key` as JSON, or undefined when absent (retrying). */
  async read<T>(key: string): Promise<T | undefined> {
    const entry = await this.retry(`reading ${key}`, () => this.kv.get(key));
    return entry && entry.value.length ? entry.json<T>() : undefined;
  }

  /** Writes `value` as JSON under KV key `key` (retrying). */
  async write(key: string, value: unknown): Promise<void> {
    await this.retry(`writing ${key}`, () => this.kv.put(key, JSON.stringify(value)));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.drain();
  }
}

/** Keys of the run's KV bucket. */
export const KV_KEYS = {
  /** `{version, bytes}` of the newest weights object. */
  weights: "weights",
  /** `{published, total?}`: task batches published, and their number once all are. */
  tasks: "tasks",
  /** `{state: "running" | "done"}`: the trainer's. */
  run: "run",
  /** Prefix of the explorer registry: `explorers.<id>` holds an explorer's heartbeat. */
  explorers: "explorers",
} as const;

async function connectWithBackoff(
  url: string,
  log: (line: string) => void,
  signal?: AbortSignal,
): Promise<NatsConnection> {
  let wait = FIRST_BACKOFF_MS;
  for (let attempt = 1;; attempt++) {
    signal?.throwIfAborted();
    try {
      return await connect({
        servers: url.split(","),
        maxReconnectAttempts: -1,
        reconnectTimeWait: 1000,
        name: `rft-${Deno.pid}`,
      });
    } catch (err) {
      log(
        `cluster: cannot reach NATS at ${url} (attempt ${attempt}: ${(err as Error).message}); ` +
          `retrying in ${wait} ms`,
      );
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 2, MAX_BACKOFF_MS);
    }
  }
}

/** Logs the connection's disconnects and reconnects (the client retries by itself). */
function watchStatus(nc: NatsConnection, url: string, log: (line: string) => void): void {
  (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect" || status.type === "reconnect") {
        log(`cluster: ${status.type} from NATS at ${url}`);
      }
    }
  })().catch(() => {});
}

type StreamSettings = Parameters<JetStreamManager["streams"]["add"]>[0];

async function ensureStream(jsm: JetStreamManager, config: StreamSettings): Promise<void> {
  try {
    await jsm.streams.info(config.name!);
  } catch {
    try {
      await jsm.streams.add(config);
    } catch (err) {
      // Another process created it meanwhile.
      await jsm.streams.info(config.name!).catch(() => {
        throw err;
      });
    }
  }
}

/**
 * The trainer's side of the experience stream: one durable consumer (`trainer`) reads every
 * part and completion record in stream order. A part's experiences go into the trainer's own
 * `ExperienceBuffer` (which persists them) and only then is the message acked; a completion
 * record marks its explore step done and hands the explorer's metrics on. What was ingested is
 * recorded in `cluster_state.json` beside the buffer before each ack, and experiences the buffer
 * already knows are skipped, so a message redelivered after a trainer crash is not stored twice,
 * nor a step explored again by a second explorer after the server's duplicate window.
 */

import { AckPolicy, type Consumer, DeliverPolicy } from "@nats-io/jetstream";
import { experienceFromRow } from "../buffer/experience.ts";
import type { ExperienceBuffer } from "../buffer/experience_buffer.ts";
import { Notifier } from "../util/notifier.ts";
import { writeAtomic } from "../util/write_atomic.ts";
import type { ExperiencePart } from "./experience_publisher.ts";
import { NANOS, type NatsLink } from "./nats_link.ts";
import type { StepDone } from "./task_queue.ts";

/** Name of the ingest record in the trainer's stage directory. */
export const CLUSTER_STATE_FILE = "cluster_state.json";

/** The ingest record. */
interface IngestState {
  /** `<step>-<part>` of every part stored. */
  parts: string[];
  /** The completion records that arrived, one per explore step. */
  done: StepDone[];
}

/** Options of {@link ExperienceIngest.start}. */
export interface IngestOptions {
  /** Directory of the ingest record. */
  stateDir: string;
  /** Receives each explore step's metrics, once, with the id of the explorer that ran it. */
  onStepDone: (done: StepDone) => void | Promise<void>;
  /** Seconds before an unacked message is delivered again. */
  ackWaitS: number;
  log: (line: string) => void;
}

/** The trainer's experience consumer (see the file comment). */
export class ExperienceIngest {
  readonly #parts: Set<string>;
  readonly #done: Map<number, StepDone>;
  readonly #changes = new Notifier();
  readonly #restored: readonly StepDone[];
  #stopped = false;
  #loop: Promise<void> = Promise.resolve();
  #failure: Error | undefined;
  /** Explore steps in the run, once the task feed knows. */
  totalSteps = Infinity;

  private constructor(
    readonly link: NatsLink,
    readonly buffer: ExperienceBuffer,
    readonly consumer: Consumer,
    readonly options: IngestOptions,
    state: IngestState,
  ) {
    this.#parts = new Set(state.parts);
    this.#restored = state.done;
    this.#done = new Map(state.done.map((d) => [d.step, d]));
  }

  /** Opens the durable consumer and starts reading into `buffer`. */
  static async start(
    link: NatsLink,
    buffer: ExperienceBuffer,
    options: IngestOptions,
  ): Promise<ExperienceIngest> {
    const stream = link.names.experienceStream;
    await link.jsm.consumers.info(stream, "trainer").catch(() =>
      link.jsm.consumers.add(stream, {
        durable_name: "trainer",
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: options.ackWaitS * NANOS,
      })
    );
    const consumer = await link.js.consumers.get(stream, "trainer");
    const state = await readState(`${options.stateDir}/${CLUSTER_STATE_FILE}`);
    const ingest = new ExperienceIngest(link, buffer, consumer, options, state);
    ingest.#loop = ingest.#run().catch((err) => {
      ingest.#failure = err as Error;
      ingest.#changes.notify();
    });
    return ingest;
  }

  /** Explore steps done so far. */
  get doneSteps(): number {
    return this.#done.size;
  }

  /** Whether every explore step of the run is done. */
  get allDone(): boolean {
    return this.#done.size >= this.totalSteps;
  }

  /** Waits until explore steps 1..`step` are all done (or every step of the run is). */
  async untilDone(step: number, signal?: AbortSignal): Promise<void> {
    const ready = () => {
      if (this.#failure) throw this.#failure;
      if (this.allDone) return true;
      for (let s = 1; s <= Math.min(step, this.totalSteps); s++) {
        if (!this.#done.has(s)) return false;
      }
      return true;
    };
    await this.#changes.until(ready, signal);
  }

  /**
   * Hands the completion records of steps after `step` that arrived before this process started
   * to `onStepDone` again (a trainer resumed from step `step` logs those steps again).
   */
  async replayDone(step: number): Promise<void> {
    for (const done of this.#restored.filter((d) => d.step > step)) {
      await this.options.onStepDone(done);
    }
  }

  /** Stops reading (after the current message). */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loop;
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      const msg = await this.link.retry(
        "reading experiences",
        () => this.consumer.next({ expires: 1000 }),
      );
      if (!msg) continue;
      if (msg.subject === this.link.names.batchSubject) {
        await this.#ingestPart(msg.json<ExperiencePart>());
      } else {
        const done = msg.json<StepDone>();
        if (!this.#done.has(done.step)) {
          this.#done.set(done.step, done);
          await this.#saveState();
          await this.options.onStepDone(done);
        }
      }
      // Not waited for: a lost ack redelivers the message, which the record above skips.
      msg.ack();
      this.#changes.notify();
    }
  }

  async #ingestPart(part: ExperiencePart): Promise<void> {
    const key = `${part.step}-${part.part}`;
    if (this.#parts.has(key)) return;
    const exps = part.rows
      .map((row, i) => experienceFromRow(row, `#${i} of experience part ${key}`))
      .filter((exp) => !this.buffer.has(exp.info.eid));
    const put = await this.buffer.put(exps);
    if (put.rejected) {
      this.options.log(
        `cluster: ${put.rejected} experience(s) of step ${part.step} from a future policy version rejected`,
      );
    }
    this.#parts.add(key);
    await this.#saveState();
  }

  async #saveState(): Promise<void> {
    const state: IngestState = { parts: [...this.#parts], done: [...this.#done.values()] };
    await writeAtomic(`${this.options.stateDir}/${CLUSTER_STATE_FILE}`, JSON.stringify(state));
  }
}

async function readState(path: string): Promise<IngestState> {
  try {
    return JSON.parse(await Deno.readTextFile(path)) as IngestState;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { parts: [], done: [] };
    throw new Error(`Cannot read the cluster ingest record ${path}: ${(err as Error).message}`);
  }
}

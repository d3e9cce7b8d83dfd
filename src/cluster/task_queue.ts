/**
 * The run's tasks as a JetStream work queue. The trainer publishes the taskset once, one message
 * per explore step (`feedTasks`, message id `task-<step>`, so a restarted trainer publishes no
 * batch twice); explorers claim batches through one shared durable consumer (`TaskQueue`, a
 * `TaskSource` for the Explorer). A claimed batch is acked only when its explore step is
 * finished (`finish`: its experiences are in the experience stream and its completion record
 * published after them); until then the explorer signals progress every third of `ack_wait`, and
 * the batch of an explorer that dies goes to another after `ack_wait`.
 */

import { beginActivity } from "../util/activity.ts";
import { AckPolicy, type Consumer, type JsMsg } from "@nats-io/jetstream";
import type { Task } from "../buffer/task.ts";
import type { Taskset } from "../buffer/taskset.ts";
import type { TaskScheduleState } from "../buffer/taskset_scheduler.ts";
import type { TaskSource } from "../explorer/explorer.ts";
import { KV_KEYS, NANOS, type NatsLink } from "./nats_link.ts";

/** One explore step's tasks as published. */
export interface TaskBatch {
  /** The explore step, 1-based, in the order the taskset draws. */
  step: number;
  tasks: Task[];
}

/** The task feed's record in the KV. */
export interface TaskFeed {
  /** Batches published. */
  published: number;
  /** Batches in the run, once every one is published. */
  total?: number;
}

/** A step's completion record (subject `exp.done`). */
export interface StepDone {
  step: number;
  /** The registry id of the explorer that ran it. */
  explorer: number;
  /** The explorer's metrics of the step. */
  metrics: Record<string, number>;
}

/**
 * Publishes the batches of `taskset` (`batchSize` tasks each, up to `totalSteps`) the feed has
 * not published yet; returns how many batches the run has. The taskset draws the same batches
 * on every call (its seed), so a restarted trainer skips the published ones.
 */
export async function feedTasks(
  link: NatsLink,
  taskset: Taskset,
  batchSize: number,
  totalSteps: number,
): Promise<number> {
  const feed = await link.read<TaskFeed>(KV_KEYS.tasks) ?? { published: 0 };
  if (feed.total !== undefined) return feed.total;
  let step = 0;
  for (let tasks = taskset.nextBatch(batchSize); tasks; tasks = taskset.nextBatch(batchSize)) {
    step++;
    if (step > feed.published) {
      const batch: TaskBatch = { step, tasks };
      await link.publish(link.names.tasksSubject, JSON.stringify(batch), `task-${step}`);
      await link.write(KV_KEYS.tasks, { published: step } satisfies TaskFeed);
    }
    if (step >= totalSteps) break;
  }
  await link.write(KV_KEYS.tasks, { published: step, total: step } satisfies TaskFeed);
  return step;
}

/** Name of the explorers' shared durable consumer of the task queue. */
const CONSUMER = "explorers";

/** How long one pull waits for a batch before looking at the run state, in ms. */
const PULL_MS = 1000;

/** Task batches claimed from the run's work queue (see the file comment). */
export class TaskQueue implements TaskSource {
  #claimed: { msg: JsMsg; batch: TaskBatch }[] = [];
  /** The batch claimed ahead of its step (by the synchronizer) and not handed out yet. */
  #next: TaskBatch | null | undefined;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  #ended = false;

  private constructor(
    readonly link: NatsLink,
    readonly consumer: Consumer,
    readonly explorer: number,
    readonly ackWaitS: number,
    readonly signal?: AbortSignal,
  ) {}

  /** Opens the shared consumer (created by the first explorer) of `link`'s run. */
  static async open(
    link: NatsLink,
    options: { explorer: number; ackWaitS: number; signal?: AbortSignal },
  ): Promise<TaskQueue> {
    const stream = link.names.tasksStream;
    try {
      await link.jsm.consumers.info(stream, CONSUMER);
    } catch {
      await link.jsm.consumers.add(stream, {
        durable_name: CONSUMER,
        ack_policy: AckPolicy.Explicit,
        ack_wait: options.ackWaitS * NANOS,
      }).catch(() => link.jsm.consumers.info(stream, CONSUMER));
    }
    const consumer = await link.js.consumers.get(stream, CONSUMER);
    return new TaskQueue(link, consumer, options.explorer, options.ackWaitS, options.signal);
  }

  /** Whether the run has no more batches for this explorer. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The step of the batch claimed ahead, claiming it now if none is (null: the run is over). */
  async peekStep(): Promise<number | null> {
    if (this.#next === undefined) this.#next = await this.#claim();
    return this.#next?.step ?? null;
  }

  /** The explore steps of the batches claimed for the current step. */
  get claimedSteps(): number[] {
    return this.#claimed.map((c) => c.batch.step);
  }

  async nextBatch(): Promise<Task[] | null> {
    const batch = this.#next !== undefined ? this.#next : await this.#claim();
    this.#next = undefined;
    return batch?.tasks ?? null;
  }

  /** Selection happened when the trainer fed the queue: nothing learns from the rewards here. */
  feedback(): Record<string, number> {
    return {};
  }

  /** A work queue keeps no cursor of its own explorer: the server holds it. */
  state(): TaskScheduleState {
    return { tasksets: [], credits: [], lessons: [] };
  }

  restore(): void {}

  /**
   * The current step is done and its experiences published: publishes one completion record per
   * claimed batch (carrying the step's metrics), then acks the batches.
   */
  async finish(metrics: Record<string, number>): Promise<void> {
    for (const { msg, batch } of this.#claimed) {
      const done: StepDone = { step: batch.step, explorer: this.explorer, metrics };
      await this.link.publish(
        this.link.names.doneSubject,
        JSON.stringify(done),
        `done-${batch.step}`,
      );
      // Not waited for: a lost ack (or one for a batch already redelivered to a slower explorer's
      // rival) lets the batch be explored again, and the message ids drop the copy.
      msg.ack();
    }
    this.#claimed = [];
    this.#stopHeartbeat();
  }

  /**
   * Gives back the batch claimed ahead and not started (NAK: it can be claimed again at once,
   * here or elsewhere), so that earlier batches redelivered meanwhile are claimed first.
   */
  release(): void {
    const next = this.#next;
    this.#next = undefined;
    const k = this.#claimed.findIndex((c) => c.batch === next);
    if (k < 0) return;
    this.#claimed[k].msg.nak();
    this.#claimed.splice(k, 1);
    if (this.#claimed.length === 0) this.#stopHeartbeat();
  }

  /** Stops signalling progress (the process ends; unacked batches go to others). */
  close(): void {
    this.#stopHeartbeat();
  }

  async #claim(): Promise<TaskBatch | null> {
    using _waiting = beginActivity("waiting for a task batch from the trainer");
    while (!this.#ended) {
      this.signal?.throwIfAborted();
      const msg = await this.link.retry(
        "claiming a task batch",
        () => this.consumer.next({ expires: PULL_MS }),
      );
      if (msg) {
        const batch = msg.json<TaskBatch>();
        this.#claimed.push({ msg, batch });
        this.#startHeartbeat();
        return batch;
      }
      const run = await this.link.read<{ state: string }>(KV_KEYS.run);
      if (run?.state === "done") this.#ended = true;
    }
    return null;
  }

  #startHeartbeat(): void {
    this.#heartbeat ??= setInterval(() => {
      for (const { msg } of this.#claimed) msg.working();
    }, this.ackWaitS * 1000 / 3);
  }

  #stopHeartbeat(): void {
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }
}

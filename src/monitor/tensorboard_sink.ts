/**
 * The TensorBoard monitor: each row's scalars as an event under `<runDir>/tensorboard/`, in a
 * subdirectory per stage when the run names stages (`tensorboard/sft/`, `tensorboard/grpo/`:
 * TensorBoard shows them as runs side by side, each with its own step axis, as steps count per
 * stage). Event files are opened when their stage logs its first row.
 */

import type { MetricsRecord, MetricsSink } from "./metrics_sink.ts";
import { TensorBoardWriter } from "./tensorboard.ts";

/** Writes rows to TensorBoard event files (see the file comment). */
export class TensorBoardSink implements MetricsSink {
  readonly #writers = new Map<string, TensorBoardWriter>();

  constructor(readonly runDir: string) {}

  async log({ step, stage, time, metrics }: MetricsRecord): Promise<void> {
    const key = stage ?? "";
    let writer = this.#writers.get(key);
    if (!writer) {
      const dir = `${this.runDir}/tensorboard${stage ? `/${stage}` : ""}`;
      writer = await TensorBoardWriter.open(dir, time);
      this.#writers.set(key, writer);
    }
    await writer.writeScalars(step, metrics, time);
  }

  close(): void {
    for (const writer of this.#writers.values()) writer.close();
  }
}

/**
 * The monitors a run can write to, by name (Trinity's `monitor_type` names them): `jsonl`
 * (metrics.jsonl, always on), `console` (the progress line), `tensorboard` (event files) and
 * `wandb` (Weights & Biases, where `@wandb/sdk`, a network and `WANDB_API_KEY` are at hand).
 * Plugins may register more. A monitor that cannot open says why instead of failing the run.
 */

import { Registry } from "../util/registry.ts";
import { ConsoleSink } from "./console_progress.ts";
import type { MetricsSink } from "./metrics_sink.ts";
import { MetricsLog, type MetricsLogOptions } from "./metrics_log.ts";
import { TensorBoardSink } from "./tensorboard_sink.ts";
import { openWandbSink } from "./wandb_sink.ts";

/** What a monitor is opened for. */
export interface MonitorContext {
  runDir: string;
  project: string;
  name: string;
  /** The resolved config, for monitors that record it (W&B). */
  config?: unknown;
  /** How metrics.jsonl is continued on resume. */
  resume?: MetricsLogOptions;
}

/** Opens a monitor: its sink, or why it cannot be opened here. */
export type MonitorFactory = (
  ctx: MonitorContext,
) => Promise<{ sink: MetricsSink } | { unavailable: string }>;

/** metrics.jsonl as a sink. */
async function openJsonl(ctx: MonitorContext): Promise<{ sink: MetricsSink }> {
  const log = await MetricsLog.open(ctx.runDir, ctx.resume);
  return {
    sink: {
      log: (r) => log.append(r.step, r.metrics, r.time, r.stage),
      close: () => log.close(),
    },
  };
}

/** The monitors by name (see the file comment). */
export const MONITORS: Registry<MonitorFactory> = new Registry<MonitorFactory>("monitor", [
  ["jsonl", openJsonl],
  ["console", () => Promise.resolve({ sink: new ConsoleSink() })],
  ["tensorboard", (ctx) => Promise.resolve({ sink: new TensorBoardSink(ctx.runDir) })],
  [
    "wandb",
    (ctx) =>
      openWandbSink({
        project: ctx.project,
        name: ctx.name,
        runDir: ctx.runDir,
        config: ctx.config,
      }),
  ],
]);

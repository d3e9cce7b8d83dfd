/**
 * The part every training step shares, whatever its loss: gradients of a scalar loss term w.r.t.
 * the optimizer's parameters, global-norm clipping and the AdamW update appended to the loss's
 * graph and compiled (metrics first: they read parameters the updates overwrite), and the run of
 * one step with its learning rate and a single metrics readback.
 */

import type { GpuContext } from "../gpu/device.ts";
import { grad } from "../graph/autodiff.ts";
import { compileGraph, type Executable, type Feed } from "../graph/executable.ts";
import type { Tensor } from "../graph/tensor.ts";
import type { LossTerm } from "../algorithm/loss_agg.ts";
import type { AdamW } from "./adamw.ts";
import { clipGradNorm, NORM_INDEX } from "./grad_clip.ts";
import { learningRate, type LrScheduleConfig } from "./lr_schedule.ts";

/** A compiled optimizer step: the executable and the named scalar metrics it computes. */
export interface OptimizerGraph {
  exe: Executable;
  metrics: [string, Tensor][];
}

/**
 * Appends gradients of `term.loss`, clipping to `gradClip` (none when undefined) and the AdamW
 * update to the loss's graph, and compiles it. The loss is reported as `lossName`, the norm as
 * `grad_norm`, next to the term's own metrics.
 */
export async function compileOptimizerGraph(
  gpu: GpuContext,
  optimizer: AdamW,
  term: LossTerm,
  { lossName, gradClip, label }: { lossName: string; gradClip?: number; label: string },
): Promise<OptimizerGraph> {
  const g = term.loss.graph;
  const grads = grad(term.loss, optimizer.params.map((p) => g.variable(p)));
  const norm = clipGradNorm(grads, gradClip);
  const updates = optimizer.update(grads, norm);
  const metrics: [string, Tensor][] = [
    [lossName, term.loss],
    ...Object.entries(term.metrics),
    ["grad_norm", norm],
  ];
  // Metrics first: they read parameters that the updates overwrite.
  const exe = await compileGraph(gpu, [...metrics.map(([, t]) => t), ...updates], label);
  return { exe, metrics };
}

/**
 * Runs one optimizer step of `graph` on `feeds` at the learning rate `schedule` gives for the
 * optimizer's next step; returns every metric (and `lr`) from one readback.
 */
export async function runOptimizerStep(
  graph: OptimizerGraph,
  optimizer: AdamW,
  schedule: LrScheduleConfig,
  feeds: ReadonlyMap<Tensor, Feed>,
): Promise<Record<string, number>> {
  const lr = learningRate(schedule, optimizer.stepCount);
  optimizer.beginStep(lr);
  await graph.exe.run(feeds);
  const values = await graph.exe.read(graph.metrics.map(([, t]) => t));
  const metrics: Record<string, number> = { lr };
  graph.metrics.forEach(([name], i) => {
    metrics[name] = name === "grad_norm" ? values[i][NORM_INDEX] : values[i][0];
  });
  return metrics;
}

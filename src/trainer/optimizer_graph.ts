/**
 * The part every training step shares, whatever its loss: gradients of a scalar loss term w.r.t.
 * the optimizer's parameters, global-norm clipping and the AdamW update appended to the loss's
 * graph and compiled (metrics first: they read parameters the updates overwrite), and the run of
 * one step with its learning rate and a single metrics readback; and the same update on its own,
 * reading gradients summed over micro-batches by a `GradAccumulator`.
 */

import type { GpuContext } from "../gpu/device.ts";
import { grad } from "../graph/autodiff.ts";
import { compileGraph, type Executable, type Feed } from "../graph/executable.ts";
import type { Tensor } from "../graph/tensor.ts";
import type { LossTerm } from "../algorithm/loss_agg.ts";
import { Graph } from "../graph/graph.ts";
import { AdamW, type AdamWOptions, defaultNoDecay } from "./adamw.ts";
import type { GradAccumulator } from "./grad_accumulator.ts";
import { clipGradNorm, NORM_INDEX } from "./grad_clip.ts";
import { learningRate, type LrSchedule } from "./lr_schedule.ts";

/**
 * AdamW and its learning-rate schedule, keys as `algorithm.optimizer` spells them (`lr` the
 * schedule's peak, held there alone).
 */
export type OptimizerConfig = Omit<AdamWOptions, "noDecay"> & LrSchedule;

/** AdamW over `params` with `config`'s hyper-parameters and rft's no-decay rule. */
export function createOptimizer(
  gpu: GpuContext,
  params: ConstructorParameters<typeof AdamW>[1],
  { betas, eps, weightDecay, momentsDtype }: OptimizerConfig,
): AdamW {
  return new AdamW(gpu, params, {
    betas,
    eps,
    weightDecay,
    momentsDtype,
    noDecay: defaultNoDecay,
  });
}

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
  const { norm, updates } = clippedUpdate(optimizer, grads, gradClip);
  const metrics: [string, Tensor][] = [
    [lossName, term.loss],
    ...Object.entries(term.metrics),
    ["grad_norm", norm],
  ];
  // Metrics first: they read parameters that the updates overwrite.
  const exe = await compileGraph(gpu, [...metrics.map(([, t]) => t), ...updates], label);
  return { exe, metrics };
}

/** Global-norm clipping (none when `gradClip` is undefined) and the AdamW update of `grads`. */
function clippedUpdate(optimizer: AdamW, grads: readonly Tensor[], gradClip?: number) {
  const norm = clipGradNorm(grads, gradClip);
  return { norm, updates: optimizer.update(grads, norm) };
}

/** A compiled update from accumulated gradients, and its gradient-norm tensor. */
export interface UpdateGraph {
  exe: Executable;
  norm: Tensor;
}

/** Compiles clipping and the AdamW update of the gradient sums held by `accumulator`. */
export async function compileUpdateGraph(
  gpu: GpuContext,
  optimizer: AdamW,
  accumulator: GradAccumulator,
  { gradClip, label }: { gradClip?: number; label: string },
): Promise<UpdateGraph> {
  const { norm, updates } = clippedUpdate(optimizer, accumulator.read(new Graph()), gradClip);
  return { exe: await compileGraph(gpu, [norm, ...updates], label), norm };
}

/**
 * Runs `graph` as the optimizer's next step at the learning rate of schedule step `lrStep`
 * (default: the optimizer's step count), then `afterRun` (e.g. resetting the sums it read);
 * returns the rate and the gradient norm, read back once.
 */
export async function readOptimizerMetrics(
  graph: UpdateGraph,
  optimizer: AdamW,
  schedule: LrSchedule,
  lrStep: number | undefined,
  afterRun: () => void,
): Promise<{ lr: number; gradNorm: number }> {
  const lr = beginStep(optimizer, schedule, lrStep);
  await graph.exe.run();
  afterRun();
  const [norm] = await graph.exe.read([graph.norm]);
  return { lr, gradNorm: norm[NORM_INDEX] };
}

/** Begins the optimizer's next step at the rate of schedule step `lrStep`; returns the rate. */
function beginStep(optimizer: AdamW, schedule: LrSchedule, lrStep?: number): number {
  const lr = learningRate(schedule, lrStep ?? optimizer.stepCount);
  optimizer.beginStep(lr);
  return lr;
}

/**
 * Runs one optimizer step of `graph` on `feeds` at the learning rate `schedule` gives for step
 * `lrStep` (default: the optimizer's step count); returns every metric (and `lr`) from one
 * readback.
 */
export async function runOptimizerStep(
  graph: OptimizerGraph,
  optimizer: AdamW,
  schedule: LrSchedule,
  feeds: ReadonlyMap<Tensor, Feed>,
  lrStep?: number,
): Promise<Record<string, number>> {
  const lr = beginStep(optimizer, schedule, lrStep);
  await graph.exe.run(feeds);
  const values = await graph.exe.read(graph.metrics.map(([, t]) => t));
  const metrics: Record<string, number> = { lr };
  graph.metrics.forEach(([name], i) => {
    metrics[name] = name === "grad_norm" ? values[i][NORM_INDEX] : values[i][0];
  });
  return metrics;
}

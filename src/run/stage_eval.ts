/**
 * A stage's Evaluator: its eval tasksets run on a rollout model with the stage's runner settings,
 * due at startup (`eval_on_startup`) and every `eval_interval` train steps, rows logged at the
 * stage's global step of the version measured. The evaluation itself is `explorer/evaluator.ts`.
 */

import type { StageConfig } from "../config/run_config.ts";
import { type EvalTaskset, Evaluator } from "../explorer/evaluator.ts";
import type { RolloutModel } from "../workflow/rollout_model.ts";
import type { WorkflowServices } from "../workflow/workflow.ts";
import type { StageContext } from "./stage_context.ts";

/** Options of {@link stageEvaluator}. */
export interface StageEvaluatorOptions {
  /** The version the stage starts at (a resumed stage's checkpoint step). */
  startVersion: number;
  /** What workflows get besides the model (OpenAI endpoint, auxiliary models). */
  services?: WorkflowServices;
  /** Global step of version 0 (default: the stage's step offset). */
  stepOffset?: number;
}

/** The evaluator of `stage` on `model` (see the file comment). */
export function stageEvaluator(
  stage: StageConfig,
  ctx: StageContext,
  evalTasksets: readonly EvalTaskset[],
  model: RolloutModel,
  { startVersion, services, stepOffset = ctx.stepOffset }: StageEvaluatorOptions,
): Evaluator {
  const { runnerNum, maxTimeout, maxRetryTimes, evalInterval, evalOnStartup } = stage.explorer;
  return new Evaluator({
    evalTasksets,
    run: { model, runnerNum, maxTimeout, maxRetryTimes, signal: ctx.signal, services },
    schedule: { interval: evalInterval, onStartup: evalOnStartup, startVersion },
    logRow: (version, metrics) => ctx.monitor.log(stepOffset + version, metrics),
    log: ctx.log,
  });
}

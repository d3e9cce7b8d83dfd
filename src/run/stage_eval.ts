/**
 * A stage's Evaluator: its eval tasksets run on a rollout model with the stage's runner settings,
 * due at startup (`eval_on_startup`) and every `eval_interval` train steps, rows logged at the
 * stage's step of the version measured; and the evaluation of a model the stage trains
 * without an explorer (its own rollout model over the trained weights). The evaluation itself is
 * `explorer/evaluator.ts`.
 */

import type { StageConfig } from "../config/run_config.ts";
import { type EvalTaskset, Evaluator } from "../explorer/evaluator.ts";
import type { PolicyModel } from "../model/policy.ts";
import type { PolicyRolloutModel } from "../workflow/policy_rollout_model.ts";
import type { RolloutModel } from "../workflow/rollout_model.ts";
import type { WorkflowServices } from "../workflow/workflow.ts";
import type { StageContext } from "./stage_context.ts";
import { rolloutModel } from "./stage_policy.ts";
import { openStageServices } from "./stage_services.ts";
import { openEvalTasksets } from "./stage_tasksets.ts";

/** The evaluation of a model being trained: its rollout model and the stage's Evaluator. */
export interface StageEvaluation {
  /** Follows the trained weights' version (the trainer moves it). */
  rollout: PolicyRolloutModel;
  evaluator: Evaluator;
}

/** Options of {@link stageEvaluator}. */
export interface StageEvaluatorOptions {
  /** The version the stage starts at (a resumed stage's checkpoint step). */
  startVersion: number;
  /** What workflows get besides the model (OpenAI endpoint, auxiliary models). */
  services?: WorkflowServices;
}

/** The evaluator of `stage` on `model` (see the file comment). */
export function stageEvaluator(
  stage: StageConfig,
  ctx: StageContext,
  evalTasksets: readonly EvalTaskset[],
  model: RolloutModel,
  { startVersion, services }: StageEvaluatorOptions,
): Evaluator {
  const { runnerNum, maxTimeout, maxRetryTimes, evalInterval, evalOnStartup } = stage.explorer;
  return new Evaluator({
    evalTasksets,
    run: { model, runnerNum, maxTimeout, maxRetryTimes, signal: ctx.signal, services },
    schedule: { interval: evalInterval, onStartup: evalOnStartup, startVersion },
    logRow: (version, metrics) => ctx.monitor.log(version, metrics),
    log: ctx.log,
  });
}

/**
 * The evaluation of `model`, trained by `stage` from version `startVersion`, or undefined when
 * the stage has no eval tasksets. With `services`, its workflows get the stage's services (the
 * OpenAI server over the rollout model, auxiliary models). Disposing it frees the rollout model
 * and the services.
 */
export async function openTrainedEvaluation(
  stage: StageConfig,
  ctx: StageContext,
  model: PolicyModel,
  startVersion: number,
  { services }: { services: boolean },
): Promise<(StageEvaluation & AsyncDisposable) | undefined> {
  const evalTasksets = await openEvalTasksets(stage, ctx.log, model.tokenizer);
  if (evalTasksets.length === 0) return undefined;
  await using owned = new AsyncDisposableStack();
  const rollout = owned.use(rolloutModel(stage, model, stage.seed));
  const opened = services ? owned.use(await openStageServices(stage, ctx, rollout)) : undefined;
  const evaluator = stageEvaluator(stage, ctx, evalTasksets, rollout, {
    startVersion,
    services: opened?.services,
  });
  const free = owned.move();
  return { rollout, evaluator, [Symbol.asyncDispose]: () => free.disposeAsync() };
}

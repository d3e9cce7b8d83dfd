/**
 * What a stage's workflows get besides the rollout model: its auxiliary models and, when
 * `explorer.rollout_model.enable_openai_api` is on, the OpenAI-compatible server of its policy.
 * Shared by the explorer and by the evaluator of a train-only stage (an agent evaluated during
 * SFT talks to the policy through the same API as in RL). Disposing it frees both.
 */

import { AuxiliaryModels } from "../auxiliary/auxiliary_models.ts";
import type { StageConfig } from "../config/run_config.ts";
import { startStageServer } from "../serve/stage_server.ts";
import type { PolicyRolloutModel } from "../workflow/policy_rollout_model.ts";
import type { WorkflowServices } from "../workflow/workflow.ts";
import type { StageContext } from "./stage_context.ts";

/** A stage's workflow services; `await using` frees them. */
export interface StageServices extends AsyncDisposable {
  services: WorkflowServices;
}

/** Opens the services of `stage` around `rollout` (see the file comment). */
export async function openStageServices(
  stage: StageConfig,
  ctx: StageContext,
  rollout: PolicyRolloutModel,
  rewardFnArgs?: Readonly<Record<string, unknown>>,
): Promise<StageServices> {
  await using owned = new AsyncDisposableStack();
  const auxiliaryModels = owned.use(
    await AuxiliaryModels.open(stage.explorer.auxiliaryModels, ctx.gpu, stage.seed),
  );
  const server = owned.use(await startStageServer(stage, rollout, auxiliaryModels, ctx.log));
  const free = owned.move();
  return {
    services: { openai: server, auxiliaryModels, rewardFnArgs },
    [Symbol.asyncDispose]: () => free.disposeAsync(),
  };
}

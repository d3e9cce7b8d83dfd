/**
 * The OpenAI-compatible server of a run stage: when `explorer.rollout_model.enable_openai_api`
 * is on, the explorer's rollout model (the current policy, so API calls share the workflows'
 * generation batches and carry the synchronized policy version) is served as model
 * {@link POLICY_MODEL_ID}, with its calls recordable for training, and each Hugging Face
 * auxiliary model under its own name (never recorded). Off: nothing is started.
 */

import type { AuxiliaryModels } from "../auxiliary/auxiliary_models.ts";
import type { StageConfig } from "../config/run_config.ts";
import type { PolicyRolloutModel } from "../workflow/policy_rollout_model.ts";
import { OpenAIServer } from "./openai_server.ts";
import { DEFAULT_MAX_N, ServedModel } from "./served_model.ts";

/** The `model` name of the policy on a run's API. */
export const POLICY_MODEL_ID = "policy";

/** Starts the stage's server, or returns undefined when the stage does not enable it. */
export async function startStageServer(
  stage: StageConfig,
  rollout: PolicyRolloutModel,
  auxiliaryModels: AuxiliaryModels,
  log: (line: string) => void,
): Promise<OpenAIServer | undefined> {
  const settings = stage.explorer.rolloutModel;
  if (!settings.enableOpenaiApi) return undefined;
  const policy = new ServedModel(POLICY_MODEL_ID, rollout, {
    maxN: DEFAULT_MAX_N,
    trained: true,
    toolCallParser: settings.toolCallParser,
    autoToolChoice: settings.enableAutoToolChoice,
  });
  const auxiliary = auxiliaryModels.generators().map(([name, r]) => new ServedModel(name, r));
  const server = await OpenAIServer.start({
    models: [policy, ...auxiliary],
    hostname: settings.openaiApiHost,
    port: settings.openaiApiPort,
    apiKey: settings.openaiApiKey,
  });
  const ids = [policy, ...auxiliary].map((m) => `"${m.id}"`).join(", ");
  log(`OpenAI-compatible API at ${server.url}/v1 (models ${ids})`);
  return server;
}

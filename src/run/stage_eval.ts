/**
 * When a stage evaluates: at startup (`eval_on_startup`), every `eval_interval` train steps and
 * (the runners' business) at the end. Runs no evaluation itself.
 */

import type { StageConfig } from "../config/run_config.ts";

/** Whether to evaluate before training step `step` + 1 (weights of version `step`). */
export function evalDue(stage: StageConfig, step: number, startStep: number): boolean {
  const { evalInterval, evalOnStartup } = stage.explorer;
  if (stage.buffer.explorerInput.evalTasksets.length === 0) return false;
  if (step === startStep && step === 0) return evalOnStartup;
  return evalInterval > 0 && step % evalInterval === 0 && step !== startStep;
}

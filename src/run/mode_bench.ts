/**
 * Mode `bench` of a stage: evaluates the stage's initial model and every checkpoint saved in
 * its directory on the eval tasksets with the stage's Evaluator, logging `eval/<taskset>/mean@k`
 * (the mean accuracy over the k samples of each task, k = the taskset's `repeat_times` or
 * `rollout_args.n`), `best@k` (the share of tasks with an accurate sample, when k > 1) and the
 * reward, each at the checkpoint's step. Each model is freed before the next is loaded.
 */

import type { StageConfig } from "../config/run_config.ts";
import type { PolicyModel } from "../model/policy.ts";
import { loadModel } from "../model/policy.ts";
import { listCheckpoints } from "../trainer/checkpoint.ts";
import { loadStagePolicy, rolloutModel } from "./stage_policy.ts";
import type { StageContext, StageOutcome } from "./stage_context.ts";
import { stageEvaluator } from "./stage_eval.ts";
import { openEvalTasksets } from "./stage_tasksets.ts";

/** Runs `stage` in mode `bench`. */
export async function runBench(stage: StageConfig, ctx: StageContext): Promise<StageOutcome> {
  const evalTasksets = await openEvalTasksets(stage, ctx.log);
  if (evalTasksets.length === 0) {
    throw new Error(
      `Stage "${stage.stageName}" is in mode bench but has no buffer.explorer_input.eval_tasksets`,
    );
  }
  const checkpoints = await listCheckpoints(ctx.stageDir);
  const models: { step: number; load: () => Promise<PolicyModel>; label: string }[] = [
    {
      step: 0,
      label: "the initial model",
      load: async () =>
        (await loadStagePolicy(stage, ctx.stageDir, ctx.gpu, {
          ...ctx,
          resume: false,
          frozen: true,
        })).model,
    },
    ...checkpoints.map((c) => ({
      step: c.step,
      label: c.dir,
      load: () => loadModel(c.dir, { gpu: ctx.gpu }),
    })),
  ];
  let lastEval: Record<string, number> = {};
  for (const { step, load, label } of models) {
    ctx.log(`bench: evaluating ${label} (step ${step})`);
    using model = await load();
    using rollout = rolloutModel(stage, model, stage.seed);
    rollout.setPolicyVersion(step);
    const evaluator = stageEvaluator(stage, ctx, evalTasksets, rollout, { startVersion: step });
    lastEval = await evaluator.evaluate(step);
  }
  return { steps: checkpoints.at(-1)?.step ?? 0, lastEval };
}

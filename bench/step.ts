/**
 * `deno run -A bench/step.ts`: full RL steps of the built-in example (the `grpo` stage of
 * examples/addition/config.yaml: 32 prompts x 8 rollouts, exact-match reward, from scratch)
 * run with the run loop's pieces in order, one phase at a time, timed by phase:
 * generate (wall time with a model call in flight), score (the rest of the workflows' time:
 * reward fns and experiences, then advantages and the experience operators), train (the
 * `TrainStep`) and sync (the GPU weight copy into the explorer's model, waited for). Phases do
 * not overlap here (unlike `rft run`, which may explore ahead), so they sum to the step's time.
 * Prints each phase's mean over `--steps` steps after `--warmup` untimed ones (graph compiles)
 * and its share. No buffer, checkpoints or monitor: nothing is written but `--json`.
 */

import { createOperators, runOperators } from "../src/buffer/operators/mod.ts";
import { Taskset } from "../src/buffer/taskset.ts";
import { getGpu } from "../src/gpu/device.ts";
import { applyAdvantages } from "../src/algorithm/apply_advantages.ts";
import { cloneModel } from "../src/run/stage_policy.ts";
import { summarizeExperiences } from "../src/explorer/summarize.ts";
import { rolloutModel } from "../src/run/stage_policy.ts";
import { tasksetConfig } from "../src/run/stage_tasksets.ts";
import { trainStepFor } from "../src/run/stage_trainer.ts";
import { copyWeights } from "../src/sync/weight_copy.ts";
import { runTasks } from "../src/explorer/workflow_runner.ts";
import {
  EXAMPLE_CONFIG,
  EXAMPLE_RL_STAGE,
  initialPolicy,
  loadBenchStage,
} from "./_example_stage.ts";
import { benchArgs, integerFlag } from "./_flags.ts";
import { GenerationTimer } from "./_generation_timer.ts";
import { figure, writeJsonReport } from "./_report.ts";
import { formatTable } from "./_table.ts";

const SCRIPT = "bench/step.ts";

const HELP = `Usage: deno run -A ${SCRIPT} [--steps 5] [--warmup 1] [--config FILE] [--stage NAME]
  [--set key.path=value ...] [--json FILE]
--config, --stage  the RL stage to run (default ${EXAMPLE_RL_STAGE} of examples/addition/config.yaml)
--set              config overrides as for rft run, e.g. --set stages[1].buffer.batch_size=64`;

/** The phases of a step, in order. */
export const PHASES = ["generate", "score", "train", "sync"] as const;

/** A step's seconds per phase and in total. */
export type PhaseSeconds = Record<typeof PHASES[number] | "total", number>;

/** What one RL step did and how long each phase took. */
export interface StepRecord {
  step: number;
  seconds: PhaseSeconds;
  tasks: number;
  experiences: number;
  responseTokens: number;
  rewardMean: number;
}

/** Options of {@link benchRlSteps}. */
export interface StepBenchOptions {
  config: string;
  stage: string;
  overrides: readonly string[];
  /** Timed steps. */
  steps: number;
  /** Untimed steps before them. */
  warmup: number;
  /** Receives a line per step. */
  log: (line: string) => void;
}

/**
 * Runs `warmup + steps` RL steps of the stage (see the file comment); returns the records of
 * all of them, warm-up first.
 */
export async function benchRlSteps(options: StepBenchOptions): Promise<StepRecord[]> {
  const gpu = await getGpu();
  const { stage, algorithm } = await loadBenchStage(
    options.config,
    options.stage,
    options.overrides,
  );
  const fail = (detail: string): never => {
    throw new Error(`Cannot bench stage "${stage.stageName}" of ${options.config}: ${detail}`);
  };
  const section = stage.buffer.explorerInput.taskset ??
    fail("expected buffer.explorer_input.taskset, found none");
  if (algorithm.type.useCritic) fail(`algorithm "${algorithm.name}" has a critic (not timed)`);
  const advantageFn = algorithm.advantageFn;
  const trainerModel = await initialPolicy(stage, gpu);
  const explorerModel = await cloneModel(trainerModel);
  const trainStep = trainStepFor(stage, algorithm, trainerModel);
  if (trainStep.needsReference) fail("the loss needs a reference model (not timed)");
  const rollout = rolloutModel(stage, explorerModel, stage.seed);
  const generation = new GenerationTimer(rollout);
  const taskset = await Taskset.open(tasksetConfig(stage, section, false));
  const operators = createOperators(stage.dataProcessor.experiencePipeline.operators);
  const records: StepRecord[] = [];
  try {
    for (let step = 1; step <= options.warmup + options.steps; step++) {
      const tasks = taskset.nextBatch(stage.buffer.batchSize) ??
        fail(`its taskset ran out after ${step - 1} steps`);
      const start = performance.now();
      const ran = await runTasks(tasks, {
        model: generation,
        runnerNum: stage.explorer.runnerNum,
        maxTimeout: stage.explorer.maxTimeout,
        maxRetryTimes: stage.explorer.maxRetryTimes,
      });
      const generate = generation.takeSeconds();
      if (ran.failures.length) fail(`task ${ran.failures[0].taskId}: ${ran.failures[0].error}`);
      const scored = advantageFn
        ? applyAdvantages(advantageFn, ran.experiences).experiences
        : ran.experiences;
      const batch = runOperators(operators, scored).experiences;
      const scoredAt = performance.now();
      if (batch.length === 0) fail("the experience operators kept nothing to train on");
      await trainStep.step(batch);
      const trainedAt = performance.now();
      await copyWeights(trainerModel, explorerModel, () => rollout.setPolicyVersion(step));
      await gpu.device.queue.onSubmittedWorkDone();
      const end = performance.now();
      const seconds: PhaseSeconds = {
        generate,
        score: (scoredAt - start) / 1000 - generate,
        train: (trainedAt - scoredAt) / 1000,
        sync: (end - trainedAt) / 1000,
        total: (end - start) / 1000,
      };
      const summary = summarizeExperiences("rollout", ran.experiences);
      records.push({
        step,
        seconds,
        tasks: tasks.length,
        experiences: ran.experiences.length,
        responseTokens: ran.experiences.reduce(
          (sum, e) => sum + e.actionMask.reduce((a, b) => a + b, 0),
          0,
        ),
        rewardMean: summary["rollout/reward_mean"],
      });
      options.log(
        `  step ${step}${step <= options.warmup ? " (warm-up)" : ""}: ${
          figure(seconds.total)
        } s, ${ran.experiences.length} experiences`,
      );
    }
  } finally {
    trainStep.destroy();
    rollout.destroy();
    explorerModel.destroy();
    trainerModel.destroy();
  }
  return records;
}

/** Per phase (and total) the mean seconds over `records`. */
export function meanPhases(records: readonly StepRecord[]): PhaseSeconds {
  const mean = (key: keyof PhaseSeconds) =>
    records.reduce((sum, r) => sum + r.seconds[key], 0) / records.length;
  return {
    generate: mean("generate"),
    score: mean("score"),
    train: mean("train"),
    sync: mean("sync"),
    total: mean("total"),
  };
}

/** The command line: runs the steps, prints the table, writes `--json`. */
export async function main(args: readonly string[]): Promise<void> {
  const { values } = benchArgs(SCRIPT, {
    args: [...args],
    options: {
      steps: { type: "string", default: "5" },
      warmup: { type: "string", default: "1" },
      config: { type: "string", default: EXAMPLE_CONFIG },
      stage: { type: "string", default: EXAMPLE_RL_STAGE },
      set: { type: "string", multiple: true, default: [] },
      json: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const steps = integerFlag(SCRIPT, "steps", values.steps);
  const warmup = integerFlag(SCRIPT, "warmup", values.warmup, 0);
  const gpu = await getGpu();
  console.log(
    `adapter: ${gpu.summary.description}${gpu.summary.isFallback ? " (fallback, CPU)" : ""}`,
  );
  const records = await benchRlSteps({
    config: values.config,
    stage: values.stage,
    overrides: values.set,
    steps,
    warmup,
    log: (line) => console.error(line),
  });
  const timed = records.slice(warmup);
  const mean = meanPhases(timed);
  const { tasks, experiences } = timed[0];
  const tokens = timed.reduce((sum, r) => sum + r.responseTokens, 0) / timed.length;
  console.log(
    `\nRL step of stage "${values.stage}": ${tasks} tasks, ${experiences} experiences, ` +
      `${figure(tokens)} generated tokens per step; mean of ${steps} steps after ${warmup} warm-up`,
  );
  const phases = [...PHASES, "total" as const];
  console.log(formatTable<typeof phases[number]>([
    ["phase", (phase) => phase],
    ["seconds", (phase) => figure(mean[phase])],
    ["share", (phase) => `${(100 * mean[phase] / mean.total).toFixed(1)}%`],
  ], phases));
  console.log(
    `generated tokens/s ${figure(tokens / mean.generate)}; ` +
      `first step (warm-up, compiles graphs) ${
        warmup > 0 ? `${figure(records[0].seconds.total)} s` : "not run"
      }`,
  );
  if (values.json) {
    await writeJsonReport(values.json, "step", gpu, {
      stage: values.stage,
      overrides: values.set,
      warmup,
      meanSeconds: mean,
      steps: records,
    });
  }
}

if (import.meta.main) await main(Deno.args);

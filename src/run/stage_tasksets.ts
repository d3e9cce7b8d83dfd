/**
 * A stage's tasksets from its config sections: the `TasksetConfig` of a section (rollout args,
 * defaults of the explorer input), the eval tasksets opened, and the log lines for skipped rows.
 * Runs no task.
 */

import { promptEncodingProblem } from "../buffer/task.ts";
import { Taskset, type TasksetConfig } from "../buffer/taskset.ts";
import type { StageConfig, TasksetSection } from "../config/run_config.ts";
import type { EvalTaskset } from "../explorer/evaluator.ts";
import type { Tokenizer } from "../model/tokenizer.ts";

/**
 * A `TasksetConfig` for `section` of `stage`; with `tokenizer`, a row whose prompt it cannot
 * encode is skipped at load (listed by its file line).
 */
export function tasksetConfig(
  stage: StageConfig,
  section: TasksetSection,
  repeatTimes: number,
  isEval: boolean,
  tokenizer?: Tokenizer,
): TasksetConfig {
  const input = stage.buffer.explorerInput;
  const { n, ...sampling } = section.rolloutArgs;
  const rolloutArgs = Object.fromEntries(
    Object.entries(sampling).filter(([, v]) => v !== undefined),
  );
  return {
    path: section.path,
    table: section.name,
    split: section.split,
    subsetName: section.subsetName,
    format: section.format,
    selector: section.selector,
    featureKeys: section.featureKeys,
    selectorArgs: section.selectorArgs,
    totalEpochs: isEval ? 1 : stage.buffer.totalEpochs,
    seed: section.seed,
    defaultWorkflowType: section.defaultWorkflowType ?? input.defaultWorkflowType,
    defaultRewardFnType: section.defaultRewardFnType ?? input.defaultRewardFnType,
    rolloutArgs: { ...rolloutArgs, n: n ?? section.repeatTimes ?? (isEval ? 1 : repeatTimes) },
    workflowArgs: section.workflowArgs,
    isEval,
    ...(tokenizer === undefined ? {} : {
      rowCheck: (row, formatArgs) => promptEncodingProblem({ rawTask: row, formatArgs }, tokenizer),
    }),
  };
}

/** The eval tasksets of `stage`, opened; skipped rows are logged. */
export async function openEvalTasksets(
  stage: StageConfig,
  log: (line: string) => void,
  tokenizer?: Tokenizer,
): Promise<EvalTaskset[]> {
  return await Promise.all(stage.buffer.explorerInput.evalTasksets.map(async (section) => {
    const config = tasksetConfig(stage, section, 1, true, tokenizer);
    const taskset = await Taskset.open(config);
    logSkipped(taskset, log);
    const repeatTimes = config.rolloutArgs?.n ?? 1;
    return { name: section.name, taskset, repeatTimes, rewardFnArgs: section.rewardFnArgs };
  }));
}

/** Logs the rows `taskset` skipped (at most five, then a count). */
export function logSkipped(taskset: Taskset, log: (line: string) => void): void {
  const skipped = taskset.skippedRows;
  for (const w of skipped.slice(0, 5)) {
    log(
      `skipped ${w.path} ${w.line !== undefined ? `line ${w.line}` : `row ${w.row}`}: ${w.reason}`,
    );
  }
  if (skipped.length > 5) {
    log(`skipped ${skipped.length - 5} more rows of ${taskset.files.join(", ")}`);
  }
}

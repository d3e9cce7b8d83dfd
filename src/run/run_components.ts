/**
 * Checks and configures every component every stage of a run names, before any stage starts or
 * any GPU work: the algorithm (`resolveAlgorithm`: its advantage fn, policy loss, KL fns,
 * entropy loss and sample strategy, each configured once here for the whole run); the
 * experience operators; the monitors; each taskset's selector, workflow with its `workflow_args` and reward fn
 * with its `reward_fn_args`. A problem is a ConfigError naming the stage's key path. Opens no
 * data and no model.
 */

import { resolveAlgorithm, type ResolvedAlgorithm } from "../algorithm/resolve_algorithm.ts";
import { configure } from "../util/registry.ts";
import { createOperators } from "../buffer/operators/mod.ts";
import { TASK_SELECTORS } from "../buffer/selectors/mod.ts";
import { ConfigError } from "../config/config_error.ts";
import { exploredTasksets, type RunConfig, type TasksetSection } from "../config/run_config.ts";
import { REWARD_FUNCTIONS, WORKFLOWS } from "../workflow/mod.ts";
import { TOOL_CALL_PARSERS } from "../tool_calls/mod.ts";
import { MONITORS } from "../monitor/monitor_registry.ts";

/** Runs `check`; turns what it throws into a ConfigError at `keyPath` of the stage. */
type Checker = <T>(keyPath: string, check: () => T) => T;

/**
 * The algorithm of each stage of `config`, configured; throws a ConfigError at the first
 * unknown component name or bad argument of any stage (see the file comment).
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load_config.ts";
 * validateComponents(await loadConfig("run.yaml")); // throws before any stage runs
 * ```
 */
export function validateComponents(config: RunConfig): ResolvedAlgorithm[] {
  const single = config.stages.length === 1 && config.stages[0].stageName === "main";
  return config.stages.map((stage, i) => {
    const prefix = single ? "" : `stages[${i}].`;
    const where = single ? config.file : `${config.file} (stage "${stage.stageName}")`;
    const checker: Checker = (keyPath, check) => {
      try {
        return check();
      } catch (err) {
        if (err instanceof ConfigError) throw err;
        throw new ConfigError(where, prefix + keyPath, (err as Error).message);
      }
    };
    const algorithm = resolveAlgorithm(stage.algorithm, checker);
    checker("data_processor.experience_pipeline.operators", () => {
      createOperators(stage.dataProcessor.experiencePipeline.operators);
    });
    stage.monitor.monitors.forEach((name, j) => {
      checker(`monitor.monitors[${j}]`, () => MONITORS.get(name));
    });
    const parser = stage.explorer.rolloutModel.toolCallParser;
    if (parser !== undefined) {
      checker("explorer.rollout_model.tool_call_parser", () => TOOL_CALL_PARSERS.get(parser));
    }
    const input = stage.buffer.explorerInput;
    const tasksets = [
      ...exploredTasksets(input).map((t, j) =>
        [
          input.taskset ? "buffer.explorer_input.taskset" : `buffer.explorer_input.tasksets[${j}]`,
          t,
        ] as const
      ),
      ...input.evalTasksets.map((t, j) =>
        [`buffer.explorer_input.eval_tasksets[${j}]`, t] as const
      ),
    ];
    const judged = stage.explorer.auxiliaryModels.some((m) => m.modelPath !== undefined);
    for (const [at, section] of tasksets) validateTaskset(section, at, checker, judged);
    return algorithm;
  });
}

/**
 * A taskset's selector, workflow and `workflow_args` (and the auxiliary model it may need:
 * `hasModel` tells whether the stage has one), and its reward fn (the taskset's, else the
 * workflow's default) and `reward_fn_args`.
 */
function validateTaskset(
  section: TasksetSection,
  at: string,
  check: Checker,
  hasModel: boolean,
): void {
  const workflowName = section.defaultWorkflowType;
  check(`${at}.selector`, () => TASK_SELECTORS.get(section.selector));
  check(
    `${at}.selector_args`,
    () => configure(TASK_SELECTORS, section.selector, section.selectorArgs),
  );
  check(`${at}.default_workflow_type`, () => WORKFLOWS.get(workflowName));
  check(`${at}.workflow_args`, () => configure(WORKFLOWS, workflowName, section.workflowArgs));
  const workflow = WORKFLOWS.get(workflowName);
  check(`${at}.default_workflow_type`, () => {
    if (workflow.needsAuxiliaryModel && !hasModel) {
      throw new Error(
        `workflow "${workflowName}" needs a judge or teacher model, the first of explorer.auxiliary_models (a Hugging Face model directory); none is configured`,
      );
    }
  });
  const rewardName = section.defaultRewardFnType ?? workflow.defaultRewardFn;
  check(`${at}.default_reward_fn_type`, () => {
    if (rewardName !== undefined) REWARD_FUNCTIONS.get(rewardName);
    else if (workflow.usesRewardFn) {
      throw new Error(
        `expected a reward fn (workflow "${workflowName}" scores with one and has no default), found none; known: ${
          REWARD_FUNCTIONS.names().join(", ")
        }`,
      );
    }
  });
  if (rewardName === undefined) return;
  check(`${at}.reward_fn_args`, () => {
    const { entry, args } = configure(REWARD_FUNCTIONS, rewardName, section.rewardFnArgs);
    entry.checkArgs?.(args);
  });
}

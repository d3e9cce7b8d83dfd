/**
 * Checks every component every stage of a run names, before any stage starts or any GPU work:
 * the algorithm's advantage fn, policy loss (built once on symbolic inputs, so checks across its
 * args run too), KL fns, entropy loss and sample strategy; the experience operators; each
 * taskset's workflow with its `workflow_args` and its reward fn with its `reward_fn_args`. A
 * problem is a ConfigError naming the stage's key path. Opens no data and no model.
 */

import { ADVANTAGE_FN } from "../algorithm/advantage/mod.ts";
import { ALGORITHM_TYPE } from "../algorithm/algorithm_type.ts";
import { ENTROPY_LOSS_FN } from "../algorithm/entropy.ts";
import { KL_FN } from "../algorithm/kl.ts";
import { POLICY_LOSS_FN } from "../algorithm/policy_loss/mod.ts";
import { configure } from "../util/registry.ts";
import { SAMPLE_STRATEGY } from "../algorithm/sample_strategy.ts";
import { createOperators } from "../buffer/operators/mod.ts";
import { TASK_SELECTORS } from "../buffer/selectors/mod.ts";
import { ConfigError } from "../config/config_error.ts";
import {
  exploredTasksets,
  type RunConfig,
  type StageConfig,
  type TasksetSection,
} from "../config/run_config.ts";
import { Graph } from "../graph/graph.ts";
import { REWARD_FUNCTIONS, WORKFLOWS } from "../workflow/mod.ts";
import { TOOL_CALL_PARSERS } from "../tool_calls/mod.ts";

/** Runs `check`; turns what it throws into a ConfigError at `keyPath` of the stage. */
type Checker = (keyPath: string, check: () => void) => void;

/**
 * Throws a ConfigError at the first unknown component name or bad argument of any stage of
 * `config` (see the file comment).
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load_config.ts";
 * validateComponents(await loadConfig("run.yaml")); // throws before any stage runs
 * ```
 */
export function validateComponents(config: RunConfig): void {
  const single = config.stages.length === 1 && config.stages[0].stageName === "main";
  config.stages.forEach((stage, i) => {
    const prefix = single ? "" : `stages[${i}].`;
    const where = single ? config.file : `${config.file} (stage "${stage.stageName}")`;
    const checker: Checker = (keyPath, check) => {
      try {
        check();
      } catch (err) {
        if (err instanceof ConfigError) throw err;
        throw new ConfigError(where, prefix + keyPath, (err as Error).message);
      }
    };
    validateAlgorithm(stage, checker);
    checker("data_processor.experience_pipeline.operators", () => {
      createOperators(stage.dataProcessor.experiencePipeline.operators);
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
    for (const [at, section] of tasksets) {
      validateTaskset(
        section,
        section.defaultWorkflowType ?? input.defaultWorkflowType,
        at,
        checker,
      );
    }
  });
}

/** The algorithm's components, each with the type's defaults under the section's choices. */
function validateAlgorithm(stage: StageConfig, check: Checker): void {
  const section = stage.algorithm;
  const d = ALGORITHM_TYPE.get(section.algorithmType).defaultConfig;
  const advantageFn = section.advantageFn ?? d.advantageFn;
  if (advantageFn !== null) {
    check("algorithm.advantage_fn", () => ADVANTAGE_FN.get(advantageFn));
    check("algorithm.advantage_fn_args", () => {
      configure(ADVANTAGE_FN, advantageFn, { ...d.advantageFnArgs, ...section.advantageFnArgs });
    });
  }
  const policyLossFn = section.policyLossFn ?? d.policyLossFn;
  check("algorithm.policy_loss_fn", () => POLICY_LOSS_FN.get(policyLossFn));
  check("algorithm.policy_loss_fn_args", () => {
    const name = policyLossFn;
    const args = { ...d.policyLossFnArgs, ...section.policyLossFnArgs };
    const { entry, args: resolved } = configure(POLICY_LOSS_FN, name, args);
    const g = new Graph();
    const tokens = () => g.input([2, 3]);
    entry.build({
      logp: tokens(),
      mask: tokens(),
      oldLogp: tokens(),
      advantages: g.input([2]),
      refLogp: tokens(),
      isExpert: g.input([2]),
    }, resolved);
  });
  check("algorithm.kl_loss_fn", () => KL_FN.get(section.klLossFn ?? d.klLossFn));
  check("algorithm.kl_loss_fn_args", () => {
    configure(KL_FN, section.klLossFn ?? d.klLossFn, section.klLossFnArgs);
  });
  check("algorithm.kl_penalty_fn", () => KL_FN.get(section.klPenaltyFn ?? d.klPenaltyFn));
  check("algorithm.kl_penalty_fn_args", () => {
    configure(KL_FN, section.klPenaltyFn ?? d.klPenaltyFn, section.klPenaltyFnArgs);
  });
  const entropyLossFn = section.entropyLossFn ?? d.entropyLossFn;
  check("algorithm.entropy_loss_fn", () => ENTROPY_LOSS_FN.get(entropyLossFn));
  check("algorithm.entropy_loss_fn_args", () => {
    const name = entropyLossFn;
    const { entry, args } = configure(ENTROPY_LOSS_FN, name, section.entropyLossFnArgs);
    const g = new Graph();
    entry.build(
      { logits: g.input([2, 3, 4]), mask: g.input([2, 3]), isExpert: g.input([2]) },
      args,
    );
  });
  const sampleStrategy = section.sampleStrategy ?? d.sampleStrategy;
  check("algorithm.sample_strategy", () => SAMPLE_STRATEGY.get(sampleStrategy));
  check("algorithm.sample_strategy_args", () => {
    const name = sampleStrategy;
    configure(SAMPLE_STRATEGY, name, section.sampleStrategyArgs);
  });
}

/**
 * A taskset's workflow (`workflowName`) and `workflow_args`, and its reward fn (the taskset's,
 * else the workflow's default) and `reward_fn_args`.
 */
function validateTaskset(
  section: TasksetSection,
  workflowName: string,
  at: string,
  check: Checker,
): void {
  check(`${at}.selector`, () => TASK_SELECTORS.get(section.selector));
  check(
    `${at}.selector_args`,
    () => configure(TASK_SELECTORS, section.selector, section.selectorArgs),
  );
  check(`${at}.default_workflow_type`, () => WORKFLOWS.get(workflowName));
  check(`${at}.workflow_args`, () => configure(WORKFLOWS, workflowName, section.workflowArgs));
  const workflow = WORKFLOWS.get(workflowName);
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

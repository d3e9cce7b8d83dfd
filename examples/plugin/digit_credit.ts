/**
 * An example rft plugin: a reward fn and a workflow registered through the public API.
 * Load it with `./rft run CONFIG --plugin-dir examples/plugin` (files in `./plugins/` load
 * without a flag) and name them in the config:
 *
 * ```yaml
 * buffer:
 *   explorer_input:
 *     default_workflow_type: best_of_prompt
 *     default_reward_fn_type: digit_credit
 * ```
 */

import {
  computeReward,
  experienceFromRollout,
  resolveRewardFn,
  REWARD_FUNCTIONS,
  type RewardFnFactory,
  type Task,
  taskAnswer,
  workflowArgs,
  type WorkflowFactory,
  WORKFLOWS,
} from "rft";

/**
 * `digit_credit`: partial credit for a numeric answer, the share of the reference's digits
 * matched position by position from the right (so a dropped carry still earns something);
 * `accuracy` is 1 only for an exact answer.
 */
const digitCredit: RewardFnFactory = {
  description: "share of the reference answer's digits right, aligned from the right",
  defaultArgs: { exact_bonus: 0.5 },
  compute({ response, task }, args) {
    const answer = taskAnswer(task).trim();
    const given = response.trim();
    let matched = 0;
    for (let i = 1; i <= answer.length; i++) {
      if (given.at(-i) === answer.at(-i)) matched++;
    }
    const exact = given === answer;
    const credit = matched / answer.length / (1 + (args.exact_bonus as number));
    return {
      reward: exact ? 1 : credit,
      metrics: { accuracy: Number(exact), digit_share: matched / answer.length },
    };
  },
};

/**
 * `best_of_prompt`: the task's prompt, optionally with a fixed prefix (`workflow_args.prefix`),
 * sampled `rollout_args.n` times as raw text; each sample scored by the task's reward fn.
 */
const bestOfPrompt: WorkflowFactory = {
  description: "raw-text prompt with an optional prefix, n samples, one reward each",
  defaultArgs: { prefix: "" },
  create(task: Task, context) {
    const args = workflowArgs(bestOfPrompt, task);
    const rewardFn = resolveRewardFn(task, context);
    const prompt = `${args.prefix}${task.rawTask[task.formatArgs.promptKey]}`;
    return {
      async run() {
        const rollouts = await context.model.generate(prompt, { ...task.rolloutArgs });
        return await Promise.all(rollouts.map(async (rollout, runId) => {
          const { reward, metrics } = await computeReward(rewardFn, task, rollout.text);
          return experienceFromRollout(task, runId, rollout, reward, { metrics });
        }));
      },
    };
  },
};

REWARD_FUNCTIONS.register("digit_credit", digitCredit);
WORKFLOWS.register("best_of_prompt", bestOfPrompt);

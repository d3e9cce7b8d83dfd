/**
 * RULER workflows (Trinity's `math_ruler_workflow` and `math_trainable_ruler_workflow`, after
 * OpenPipe's ART): a judge compares the task's `n` answers at once and gives each a score in
 * [0, 1] (the last `[s1, ..., sn]` list of its reply; scores clipped, any other reply scores all
 * 0). The answers are asked with Trinity's math system prompt (`<think>` / `<answer>`; the
 * format's `system_prompt` wins) and also scored by the taskset's reward fn, Trinity's
 * `math_reward` by default, as the metric `gold_reward`.
 *
 * - `math_ruler_workflow`: the judge is the first auxiliary model; the reward is its score.
 * - `math_trainable_ruler_workflow`: the judge is the policy itself. With probability
 *   `ground_truth_probability` (Trinity's 0.5) the gold reward is known: the answers are
 *   rewarded by it, and the policy's `n` judgements become experiences too (task id
 *   `<id>-ruler`), rewarded `1 - mean |scores - gold scaled to [0, 1]|`; otherwise one
 *   judgement's scores are the answers' rewards.
 */

import type { Experience } from "../../buffer/experience.ts";
import { type Task, taskPrompt } from "../../buffer/task.ts";
import type { ChatMessage } from "../../model/chat_template.ts";
import { experienceFromRollout } from "../experience_from_rollout.ts";
import { computeReward } from "../rewards/mod.ts";
import type { Rollout } from "../rollout_model.ts";
import {
  resolveRewardFn,
  workflowArgs,
  type WorkflowContext,
  type WorkflowFactory,
} from "../workflow.ts";
import { firstAuxiliary } from "./on_policy_distill.ts";

/** Trinity's system prompt of its math workflows (R1's think/answer format). */
export const THINK_ANSWER_SYSTEM_PROMPT =
  "A conversation between User and Assistant. The user asks a question, and the Assistant " +
  "solves it. The assistant first thinks about the reasoning process in the mind and then " +
  "provides the user with the answer. The reasoning process and answer are enclosed within " +
  "<think> </think> and <answer> </answer> tags, respectively, i.e.,\n<think> reasoning " +
  "process here </think>\n<answer> answer here </answer>.\n";

/** The judge's chat over `answers` to `question` (Trinity's RULER prompt). */
export function rulerChat(question: string, answers: readonly string[]): ChatMessage[] {
  const n = answers.length;
  const solutions = answers.map((a, i) => `Candidate solution ${i + 1}: ${a}`).join("\n\n");
  return [
    {
      role: "system",
      content: `You are a fair judge. The user will provide a question and ${n} candidate ` +
        "solutions to it. Your task is to compare the solutions, see how well they resolve " +
        "the question, and assign a score within the range [0, 1] for each solution.",
    },
    {
      role: "user",
      content: `\nBelow is a question and several candidate solutions.\n\nQuestion: ${question}` +
        "\n\nSolution format requirement: first think about the reasoning process in the mind " +
        "and then provides the final answer. The reasoning process and answer are enclosed " +
        "within <think> </think> and <answer> </answer> tags, respectively, i.e.,\n<think> " +
        `reasoning process here </think>\n<answer> answer here </answer>.\n\n${solutions}\n\n` +
        "Please assign a score within the range [0, 1] for each of them, reflecting how well " +
        "they solve the question.\nYou may compare them against each other and think step by " +
        "step before returning your final scores, but keep your reasoning process brief and " +
        "concise when possible.\n\nConclude your response with a list of scores, in the " +
        `following format: [score for solution 1, score for solution 2, ..., score for solution ${n}]\n`,
    },
  ];
}

/** The `n` scores of the last `[...]` list of a judge's `reply`, clipped to [0, 1]; or none. */
export function rulerScores(reply: string, n: number): number[] | undefined {
  const [open, close] = [reply.lastIndexOf("["), reply.lastIndexOf("]")];
  if (open < 0 || close < open) return undefined;
  let list: unknown;
  try {
    list = JSON.parse(reply.slice(open, close + 1));
  } catch {
    return undefined;
  }
  if (!Array.isArray(list) || list.length !== n || !list.every(Number.isFinite)) return undefined;
  return list.map((s) => Math.min(1, Math.max(0, s)));
}

/** The answers to a RULER task with their gold rewards (the reward fn's). */
async function answer(task: Task, context: WorkflowContext) {
  const rewardFn = resolveRewardFn(task, context, "math_reward");
  const system = task.formatArgs.systemPrompt ?? THINK_ANSWER_SYSTEM_PROMPT;
  const chat: ChatMessage[] = [
    { role: "system", content: system },
    { role: "user", content: taskPrompt(task) },
  ];
  const rollouts = await context.model.chat(chat, { ...task.rolloutArgs });
  const scored = await Promise.all(rollouts.map(async (rollout) => {
    const { reward, metrics } = await computeReward(
      rewardFn,
      task,
      rollout.text,
      rollout.responseTokens.length,
    );
    return { rollout, gold: reward, metrics: { ...metrics, gold_reward: reward } };
  }));
  return scored;
}

/** Experiences of the answers with `rewards`, their metrics and `judge_success`. */
function answerExperiences(
  task: Task,
  answers: Awaited<ReturnType<typeof answer>>,
  rewards: readonly number[],
  judgeSuccess: number,
): Experience[] {
  return answers.map(({ rollout, metrics }, i) =>
    experienceFromRollout(task, i, rollout, rewards[i], {
      metrics: { ...metrics, judge_success: judgeSuccess },
    })
  );
}

/** RULER judged by the first auxiliary model. */
export const mathRulerWorkflow: WorkflowFactory = {
  description: "math answers scored together by a judge model (RULER); gold reward logged",
  defaultArgs: {},
  usesRewardFn: true,
  defaultRewardFn: "math_reward",
  needsAuxiliaryModel: true,
  create(task, context) {
    workflowArgs(mathRulerWorkflow, task);
    const judge = firstAuxiliary(context.auxiliaryModels, task, "judge");
    return {
      async run() {
        const answers = await answer(task, context);
        const texts = answers.map((a) => a.rollout.text);
        const [reply] = await judge.chat(rulerChat(taskPrompt(task), texts), { n: 1 });
        const scores = rulerScores(reply.text, texts.length);
        return answerExperiences(task, answers, scores ?? texts.map(() => 0), Number(!!scores));
      },
    };
  },
};

/** The policy judging its own answers; its judgements trained when the gold reward is known. */
export const mathTrainableRulerWorkflow: WorkflowFactory = {
  description: "RULER with the policy as judge; judgements trained against gold rewards",
  defaultArgs: { ground_truth_probability: 0.5 },
  usesRewardFn: true,
  defaultRewardFn: "math_reward",
  create(task, context) {
    const args = workflowArgs(mathTrainableRulerWorkflow, task);
    const withGold = Math.random() < (args.ground_truth_probability as number);
    return {
      async run() {
        const answers = await answer(task, context);
        const texts = answers.map((a) => a.rollout.text);
        const chat = rulerChat(taskPrompt(task), texts);
        const n = withGold ? task.rolloutArgs.n : 1;
        const judgements = await context.model.chat(chat, { ...task.rolloutArgs, n });
        const parsed = judgements.map((j) => rulerScores(j.text, texts.length));
        const ok = parsed.filter((p): p is number[] => p !== undefined);
        const success = judgements.length ? ok.length / judgements.length : 0;
        if (!withGold) {
          const scores = ok.length
            ? texts.map((_, i) => mean(ok.map((s) => s[i])))
            : texts.map(() => 0);
          return answerExperiences(task, answers, scores, success);
        }
        const gold = answers.map((a) => a.gold);
        const scaled = gold.map((g) => (g + 0.1) / 1.2);
        const judged = { ...task, taskId: `${task.taskId}-ruler` };
        return [
          ...answerExperiences(task, answers, gold, success),
          ...judgements.map((j: Rollout, i) => {
            const s = parsed[i];
            const reward = s ? 1 - mean(s.map((x, k) => Math.abs(x - scaled[k]))) : 0;
            return experienceFromRollout(judged, i, j, reward, {
              metrics: { judge_success: success, reward_for_judge: reward },
            });
          }),
        ];
      },
    };
  },
};

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

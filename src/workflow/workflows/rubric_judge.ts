/**
 * `rubric_judge_workflow` (Trinity's `RubricJudgeWorkflow`, Rubrics-as-Rewards'
 * RaR-Implicit, arXiv:2507.17746): the policy answers the task's prompt (Trinity's reasoning
 * system prompt unless the format names one); the judge, the first auxiliary model, rates each
 * answer from 1 to 10 against the row's `rubric` (a list of `{description, weight}`), replying
 * with a ```json {"rating": N}``` block at temperature 0; the reward is the rating / 10 (0 when
 * the reply holds no valid rating). Metric `judge_success`: the share of valid ratings.
 */

import { type Task, taskPrompt } from "../../buffer/task.ts";
import type { ChatMessage } from "../../model/chat_template.ts";
import { experienceFromRollout } from "../experience_from_rollout.ts";
import { workflowArgs, type WorkflowFactory } from "../workflow.ts";
import { firstAuxiliary } from "./on_policy_distill.ts";

/** Trinity's default system prompt of the rubric workflow. */
const SYSTEM_PROMPT = "A conversation between User and Assistant. The user asks a question, " +
  "and the Assistant solves it. The assistant first thinks about the reasoning process in the " +
  "mind and then provides the user with the answer.\n    ";

const JUDGE_SYSTEM_PROMPT = "You are an expert evaluator. Given a user prompt, a generated " +
  "response, and a list of quality rubrics, please rate the overall quality of the response on " +
  "a scale of 1 to 10 based on how well it satisfies the rubrics.\nConsider all rubrics " +
  "holistically when determining your score. A response that violates multiple rubrics should " +
  "receive a lower score, while a response that satisfies all rubrics should receive a higher " +
  'score.\nStart your response with a valid JSON object that starts with "```json" and ends ' +
  'with "```". The JSON object should contain\na single key "rating" and the value should be ' +
  'an integer between 1 and 10.\nExample response:\n```json\n{\n"rating": 7\n}```';

/** The rubric lines of a row (`Rubric i (weight: w): description`). */
function rubricText(task: Task): string {
  const rubric = task.rawTask.rubric;
  if (!Array.isArray(rubric) || rubric.length === 0) return "Rubrics are not provided.";
  return rubric.map((r, i) => {
    const { weight, description } = (r ?? {}) as Record<string, unknown>;
    return `Rubric ${i} (weight: ${weight}): ${description}`;
  }).join("\n");
}

/** The judge's chat rating `response` to `task`. */
function judgeChat(task: Task, response: string): ChatMessage[] {
  const user = "Given the following prompt, response, and rubrics, please rate the overall " +
    "quality of the response on a scale of 1 to 10 based\non how well it satisfies the " +
    `rubrics.\n<prompt>\n${taskPrompt(task)}\n</prompt>\n<response>\n${response}\n</response>\n` +
    `<rubrics>\n${rubricText(task)}\n</rubrics>\nYour JSON Evaluation:`;
  return [{ role: "system", content: JUDGE_SYSTEM_PROMPT }, { role: "user", content: user }];
}

/** The rating / 10 of a judge's reply (its first ```json block), or undefined. */
export function rubricScore(reply: string): number | undefined {
  let tag = "```json";
  let start = reply.indexOf(tag);
  if (start < 0) [tag, start] = ["```", reply.indexOf("```")];
  const end = start < 0 ? -1 : reply.indexOf("```", start + tag.length);
  if (end < 0) return undefined;
  try {
    const rating = JSON.parse(reply.slice(start + tag.length, end).trim())?.rating;
    return Number.isFinite(rating) && rating >= 1 && rating <= 10 ? rating * 0.1 : undefined;
  } catch {
    return undefined;
  }
}

/** Answers rated against the row's rubric by a judge model. */
export const rubricJudgeWorkflow: WorkflowFactory = {
  description: "answers rated 1-10 against the row's rubric by a judge model (RaR)",
  defaultArgs: {},
  usesRewardFn: false,
  needsAuxiliaryModel: true,
  create(task, { model, auxiliaryModels }) {
    workflowArgs(rubricJudgeWorkflow, task);
    const judge = firstAuxiliary(auxiliaryModels, task, "judge");
    const chat: ChatMessage[] = [
      { role: "system", content: task.formatArgs.systemPrompt ?? SYSTEM_PROMPT },
      { role: "user", content: taskPrompt(task) },
    ];
    return {
      async run() {
        const rollouts = await model.chat(chat, { ...task.rolloutArgs });
        const scores = await Promise.all(rollouts.map(async (rollout) => {
          const [reply] = await judge.chat(judgeChat(task, rollout.text), {
            n: 1,
            temperature: 0,
          });
          return rubricScore(reply.text);
        }));
        const success = scores.filter((s) => s !== undefined).length / scores.length;
        return rollouts.map((rollout, i) =>
          experienceFromRollout(task, i, rollout, scores[i] ?? 0, {
            metrics: { judge_success: success },
          })
        );
      },
    };
  },
};

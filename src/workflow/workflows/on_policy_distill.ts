/**
 * On-policy distillation workflows (Trinity's `on_policy_distill_workflow` and
 * `on_policy_distill_math_workflow`): the student (the policy) answers the task's chat, and the
 * teacher (the first of `explorer.auxiliary_models`) scores the student's tokens: its
 * log-probs of each response token (at `workflow_args.temperature`, default 1) are recorded on
 * the experience as `teacherLogprobs`, from which the `on_policy_distill` / `jsd` advantage fns
 * compute advantages. `on_policy_distill_workflow` rewards 0; the math one uses Qwen2.5-Math's
 * prompt and rewards accuracy (the final answer against the reference). Metric
 * `kl_divergence`: the sum over response tokens of student minus teacher log-probs.
 */

import type { Experience } from "../../buffer/experience.ts";
import { type Task, taskAnswer, taskMessages, taskPrompt } from "../../buffer/task.ts";
import type { ChatMessage } from "../../model/chat_template.ts";
import type { AuxiliaryModels } from "../../auxiliary/auxiliary_models.ts";
import { experienceFromRollout } from "../experience_from_rollout.ts";
import { mathCorrect } from "../rewards/math.ts";
import type { Rollout } from "../rollout_model.ts";
import { workflowArgs, type WorkflowFactory } from "../workflow.ts";
import { qwenMathChat } from "./math_eval_workflow.ts";

/** The first auxiliary model as a generator: the teacher or judge a workflow needs. */
export function firstAuxiliary(
  auxiliaryModels: AuxiliaryModels | undefined,
  task: Task,
  role: string,
) {
  const first = auxiliaryModels?.generators()[0];
  if (!first) {
    throw new Error(
      `Cannot run task "${task.taskId}" with workflow "${task.workflow}": it needs a ${role}, the first of explorer.auxiliary_models (a Hugging Face model), and none is configured`,
    );
  }
  return first[1];
}

/** What distinguishes the two distillation workflows. */
interface DistillSpec {
  description: string;
  chat(task: Task): ChatMessage[];
  /** The reward and metrics of a response. */
  score(task: Task, response: string): { reward: number; metrics: Record<string, number> };
}

function distillWorkflow(spec: DistillSpec): WorkflowFactory {
  const factory: WorkflowFactory = {
    description: spec.description,
    defaultArgs: { temperature: 1.0 },
    usesRewardFn: false,
    needsAuxiliaryModel: true,
    create(task, { model, auxiliaryModels }) {
      const args = workflowArgs(factory, task);
      const teacher = firstAuxiliary(auxiliaryModels, task, "teacher");
      const chat = spec.chat(task);
      const experience = async (rollout: Rollout, runId: number): Promise<Experience> => {
        const { reward, metrics } = spec.score(task, rollout.text);
        const exp = experienceFromRollout(task, runId, rollout, reward, { metrics });
        const [teacherLogprobs] = await teacher.model.logprobs([exp.tokens], {
          temperature: args.temperature as number,
          from: Math.max(0, exp.promptLength - 1),
        });
        // teacherLogprobs[t - 1] scores token t; only action tokens are kept.
        exp.teacherLogprobs = exp.tokens.map((_, t) =>
          t > 0 && exp.actionMask[t] ? teacherLogprobs[t - 1] : 0
        );
        let kl = 0;
        exp.actionMask.forEach((m, t) => kl += m ? exp.logprobs[t] - exp.teacherLogprobs![t] : 0);
        exp.metrics = { ...exp.metrics, kl_divergence: kl };
        return exp;
      };
      return {
        async run() {
          const rollouts = await model.chat(chat, { ...task.rolloutArgs });
          return await Promise.all(rollouts.map(experience));
        },
      };
    },
  };
  return factory;
}

/** Distillation on the task's chat; reward 0. */
export const onPolicyDistillWorkflow: WorkflowFactory = distillWorkflow({
  description: "on-policy distillation: the teacher's log-probs of the student's answer",
  chat: (task) => taskMessages(task),
  score: () => ({ reward: 0, metrics: {} }),
});

/** Distillation with Qwen2.5-Math's prompt; reward: the answer's accuracy. */
export const onPolicyDistillMathWorkflow: WorkflowFactory = distillWorkflow({
  description: "on-policy distillation with Qwen2.5-Math's prompt; reward accuracy",
  chat: (task) => qwenMathChat(taskPrompt(task)),
  score(task, response) {
    const accuracy = Number(mathCorrect(response, taskAnswer(task)));
    return { reward: accuracy, metrics: { accuracy } };
  },
});

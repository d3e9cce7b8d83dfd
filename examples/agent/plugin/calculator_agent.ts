/**
 * `calculator_agent`: an agent loop written only against the OpenAI chat API, trained with
 * GRPO. The model gets a sum ("5234+3377"); it may call a calculator by replying `c:EXPR` (the
 * environment answers `=RESULT`, or `=?` for an expression it cannot evaluate) as long as turns
 * are left; any other reply is its answer and ends the episode (so does a conversation that
 * outgrows the server's prompt limit, unanswered). Every call goes through a
 * recorded conversation of the run's OpenAI endpoint (`explorer.rollout_model.enable_openai_api:
 * true`), so the episode becomes one experience in which only the model's tokens are trained.
 *
 * The example's config loads it (`plugin_dirs`); see examples/agent/README.md.
 */

import OpenAI from "openai";
import { taskAnswer, taskPrompt, workflowArgs, type WorkflowFactory, WORKFLOWS } from "rft";

/** A chat message as the OpenAI client takes it. */
type Message = { role: "user" | "assistant"; content: string };

/** A tool call: `c:` then the expression. */
const TOOL_CALL = /^c:(.*)$/s;

/** The calculator: sums of non-negative integers; anything else is `?`. */
function calculate(expression: string): string {
  if (!/^\d+(\+\d+)*$/.test(expression)) return "=?";
  return `=${expression.split("+").reduce((sum, term) => sum + Number(term), 0)}`;
}

/**
 * The sampling seed of one model turn: a hash (FNV-1a) of the task, the episode and the turn,
 * so an episode samples the same tokens however the server's batches happen to form.
 */
function turnSeed(taskId: string, runId: number, turn: number): number {
  let hash = 0x811c9dc5;
  for (const char of `${taskId}/${runId}/${turn}`) {
    hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * Args: `max_turns` (3: model replies per episode; the last one must answer). Reward: 1 when
 * the answer is right, else 0. Metrics of each episode: `success` (the reward), `turns` (model
 * replies), `tool_calls`, `invalid_tool_calls` (calls answered `=?`), `trained_tokens` (action
 * mask 1: the model's tokens) and `masked_tokens` (mask 0: the question and the calculator's
 * replies).
 */
export const calculatorAgent: WorkflowFactory = {
  description: "multi-turn agent with a calculator tool, via the OpenAI API",
  defaultArgs: { max_turns: 3 },
  create(task, context) {
    const args = workflowArgs(calculatorAgent, task);
    const maxTurns = args.max_turns as number;
    const openai = context.openai;
    if (!openai) {
      throw new Error(
        `Cannot run task "${task.taskId}" with workflow "calculator_agent": it needs the policy's OpenAI API; set explorer.rollout_model.enable_openai_api: true`,
      );
    }
    const question = taskPrompt(task);
    const answer = taskAnswer(task);
    const { temperature, topP, maxTokens } = task.rolloutArgs;

    const episode = async (runId: number) => {
      const conversation = openai.openConversation();
      try {
        const client = conversation.client();
        const messages: Message[] = [{ role: "user", content: question }];
        let toolCalls = 0;
        let invalidToolCalls = 0;
        let correct = false;
        for (let turn = 1; turn <= maxTurns; turn++) {
          const completion = await client.chat.completions.create({
            model: conversation.model,
            messages,
            temperature,
            top_p: topP,
            max_tokens: maxTokens,
            seed: turnSeed(task.taskId, runId, turn),
          }).catch((err) => {
            if (err instanceof OpenAI.BadRequestError && err.code === "context_length_exceeded") {
              return undefined; // the conversation outgrew the context: unanswered
            }
            throw err;
          });
          if (!completion) break;
          const reply = completion.choices[0].message.content ?? "";
          messages.push({ role: "assistant", content: reply });
          const call = TOOL_CALL.exec(reply);
          if (!call) {
            correct = reply.trim() === answer;
            break;
          }
          toolCalls++;
          const result = calculate(call[1]);
          if (result === "=?") invalidToolCalls++;
          if (turn < maxTurns) messages.push({ role: "user", content: result });
        }
        const experiences = conversation.recording.toExperiences(task, runId, Number(correct), {
          success: Number(correct),
          turns: messages.filter((m) => m.role === "assistant").length,
          tool_calls: toolCalls,
          invalid_tool_calls: invalidToolCalls,
        });
        return experiences.map((e) => {
          const trained = e.actionMask.reduce((sum, m) => sum + m, 0);
          const metrics = { trained_tokens: trained, masked_tokens: e.tokens.length - trained };
          return { ...e, metrics: { ...e.metrics, ...metrics } };
        });
      } finally {
        conversation.close();
      }
    };
    return {
      run: async () =>
        (await Promise.all(Array.from({ length: task.rolloutArgs.n }, (_, i) => episode(i))))
          .flat(),
    };
  },
};

WORKFLOWS.register("calculator_agent", calculatorAgent);

/**
 * `calculator_agent`: an agent loop written only against the OpenAI chat API with function
 * calling, trained with GRPO. The model gets a sum ("523+337") and the tool `add(a, b)`; while
 * turns are left, each reply either calls tools (the agent runs them and sends their results
 * back as `tool` messages) or answers, which ends the episode (so does a conversation that
 * outgrows the server's prompt limit, unanswered). The agent reads `tool_calls` only: a call
 * the model mistyped reaches it as text (the server counts it as a malformed tool call), and
 * counts as the answer. Every call goes through a recorded conversation of the run's OpenAI
 * endpoint (`explorer.rollout_model.enable_openai_api: true`), so the episode becomes one
 * experience in which only the model's tokens are trained.
 *
 * The example's config loads it (`plugin_dirs`); see examples/agent/README.md.
 */

import OpenAI from "openai";
import { taskAnswer, taskPrompt, workflowArgs, type WorkflowFactory, WORKFLOWS } from "rft";

/** The tool the agent offers. */
export const ADD_TOOL: OpenAI.ChatCompletionFunctionTool = {
  type: "function",
  function: {
    name: "add",
    description: "a + b",
    parameters: {
      type: "object",
      properties: { a: { type: "integer" }, b: { type: "integer" } },
      required: ["a", "b"],
    },
  },
};

/** Runs a call of `add`: the sum of two integers, else an error text. */
export function runTool(call: OpenAI.ChatCompletionMessageFunctionToolCall): string {
  const args = JSON.parse(call.function.arguments) as { a?: unknown; b?: unknown };
  const { a, b } = args;
  if (call.function.name !== "add" || !Number.isInteger(a) || !Number.isInteger(b)) return "error";
  return String((a as number) + (b as number));
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
 * replies), `tool_calls` and `malformed_tool_calls` (calls read from the replies, and mistyped
 * calls left as text, counted by the server), `trained_tokens` (action mask 1: the model's
 * tokens) and `masked_tokens` (mask 0: the question and the tools' results).
 */
export const calculatorAgent: WorkflowFactory = {
  description: "multi-turn agent calling an add tool through OpenAI function calling",
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
        const messages: OpenAI.ChatCompletionMessageParam[] = [
          { role: "user", content: question },
        ];
        let correct = false;
        let turns = 0;
        while (turns < maxTurns) {
          const completion = await client.chat.completions.create({
            model: conversation.model,
            messages,
            tools: [ADD_TOOL],
            temperature,
            top_p: topP,
            max_tokens: maxTokens,
            seed: turnSeed(task.taskId, runId, ++turns),
          }).catch((err) => {
            if (err instanceof OpenAI.BadRequestError && err.code === "context_length_exceeded") {
              return undefined; // the conversation outgrew the context: unanswered
            }
            throw err;
          });
          if (!completion) break;
          const { message } = completion.choices[0];
          messages.push(message);
          const calls =
            (message.tool_calls ?? []) as OpenAI.ChatCompletionMessageFunctionToolCall[];
          if (calls.length === 0) {
            correct = (message.content ?? "").trim() === answer;
            break;
          }
          for (const call of calls) {
            messages.push({ role: "tool", tool_call_id: call.id, content: runTool(call) });
          }
        }
        const experiences = conversation.recording.toExperiences(task, runId, Number(correct), {
          success: Number(correct),
          turns,
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

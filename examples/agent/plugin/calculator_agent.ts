/**
 * `calculator_agent`: an agent loop written only against the OpenAI chat API, trained with
 * GRPO. The model gets a sum ("37+45"); it may call a calculator by replying `c:EXPR` (the
 * environment answers `=RESULT`, or `=?` for an expression it cannot evaluate); any other reply
 * is an answer, and a wrong one is answered `?` (try again) while turns are left. Every call
 * goes through a recorded conversation of the run's OpenAI endpoint
 * (`explorer.rollout_model.enable_openai_api: true`), so the episode becomes one experience in
 * which only the model's tokens are trained.
 *
 * Load it with `--plugin-dir examples/agent/plugin`; see examples/agent/README.md.
 */

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
 * Args: `max_turns` (3: model replies per episode) and `tool_bonus` (0.2: reward of an
 * unsolved episode that called the calculator with a well-formed sum, which gives a model from
 * scratch a first signal). Reward: 1 when an answer was right, else the bonus if earned;
 * metrics `accuracy`, `turns`, `tool_calls`.
 */
export const calculatorAgent: WorkflowFactory = {
  description: "multi-turn agent with a calculator tool, via the OpenAI API",
  defaultArgs: { max_turns: 3, tool_bonus: 0.2 },
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
        let wellFormedCall = false;
        let correct = false;
        for (let turn = 1; turn <= maxTurns && !correct; turn++) {
          const completion = await client.chat.completions.create({
            model: conversation.model,
            messages,
            temperature,
            top_p: topP,
            max_tokens: maxTokens,
          });
          const reply = completion.choices[0].message.content ?? "";
          messages.push({ role: "assistant", content: reply });
          const call = TOOL_CALL.exec(reply);
          if (call) toolCalls++;
          const result = call ? calculate(call[1]) : "";
          wellFormedCall ||= call !== null && result !== "=?";
          correct = !call && reply.trim() === answer;
          if (!correct && turn < maxTurns) {
            messages.push({ role: "user", content: call ? result : "?" });
          }
        }
        const reward = correct ? 1 : wellFormedCall ? args.tool_bonus as number : 0;
        return conversation.recording.toExperiences(task, runId, reward, {
          accuracy: Number(correct),
          turns: messages.filter((m) => m.role === "assistant").length,
          tool_calls: toolCalls,
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

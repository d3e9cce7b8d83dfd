/**
 * The math components of Trinity's examples: `math_boxed_workflow` (chat and base prompts, the
 * default `math_boxed_reward` with its think-format penalty, truncated responses masked),
 * `math_rm_workflow` (the taskset's reward fn, `math` by default) and `math_dapo_reward`
 * (+1 / -1 and DAPO's overlong penalty).
 */

import { configure } from "../../src/algorithm/registry.ts";
import type { Task } from "../../src/buffer/task.ts";
import type { ChatMessage } from "../../src/model/chat_template.ts";
import { computeReward, createWorkflow, REWARD_FUNCTIONS } from "../../src/workflow/mod.ts";
import type { Rollout, RolloutOptions } from "../../src/workflow/rollout_model.ts";
import { overlongPenalty } from "../../src/workflow/rewards/math_dapo.ts";
import { BOXED_SYSTEM_PROMPT } from "../../src/workflow/workflows/math_boxed_workflow.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { makeTask, ScriptedModel, TOKENIZER } from "./_scripted_model.ts";

/** A scripted model whose replies starting with "..." stop at the length limit. */
class TruncatingModel extends ScriptedModel {
  override async generate(prompt: string | readonly number[], options?: RolloutOptions) {
    return (await super.generate(prompt, options)).map(truncate);
  }
  override async chat(messages: readonly ChatMessage[], options?: RolloutOptions) {
    return (await super.chat(messages, options)).map(truncate);
  }
}

function truncate(rollout: Rollout): Rollout {
  return rollout.text.startsWith("...") ? { ...rollout, finishReason: "length" } : rollout;
}

const GSM8K_ROW = { question: "2 + 3?", answer: "Add them: 2 + 3 = <<2+3=5>>5.\n#### 5" };

async function run(task: Task, replies: string[]) {
  const model = new TruncatingModel(replies);
  const exps = await createWorkflow(task, { model }).run();
  return { model, exps };
}

Deno.test("math_boxed_workflow: chat with Trinity's boxed prompt, boxed answers pay, truncated ones are masked", async () => {
  const task = makeTask(GSM8K_ROW, { workflow: "math_boxed_workflow", rolloutArgs: { n: 3 } });
  const { model, exps } = await run(task, ["so \\boxed{5}", "#### 5", "... \\boxed{5}"]);
  const prompt = TOKENIZER.applyChatTemplate([
    { role: "system", content: BOXED_SYSTEM_PROMPT },
    { role: "user", content: "2 + 3?" },
  ], { addGenerationPrompt: true });
  assertEquals(model.calls[0].kind, "chat");
  assertEquals(TOKENIZER.decode(model.calls[0].promptTokens), prompt);
  // math_boxed_reward reads \boxed{} only: "#### 5" is no boxed answer.
  assertEquals(exps.map((e) => e.reward), [1, 0, 1]);
  assertEquals(exps.map((e) => e.metrics), [
    { accuracy: 1, format_score: 0 },
    { accuracy: 0, format_score: 0 },
    { accuracy: 1, format_score: 0 },
  ]);
  assertEquals(exps.map((e) => e.actionMask.some((m) => m === 1)), [true, true, false]);
  assertEquals(exps[2].truncated, true);
});

Deno.test("math_boxed_workflow: use_base sends Trinity's raw prompt; with_think penalizes a missing think block", async () => {
  const task = makeTask(GSM8K_ROW, {
    workflow: "math_boxed_workflow",
    workflowArgs: { use_base: true, with_think: true, format_score_coef: 0.25 },
    formatArgs: { promptKey: "question", responseKey: "answer", systemPrompt: "Be brief." },
    rolloutArgs: { n: 2 },
  });
  const { model, exps } = await run(task, ["<think>2+3</think> \\boxed{5}", "\\boxed{5}"]);
  assertEquals(model.calls[0].kind, "generate");
  assertEquals(
    TOKENIZER.decode(model.calls[0].promptTokens),
    "System:Be brief.\nUser:\n2 + 3?\nAssistant:\n",
  );
  assertEquals(exps.map((e) => e.reward), [1, 0.75]);
  assertEquals(exps[1].metrics, { accuracy: 1, format_score: -0.25 });
});

Deno.test("math_boxed_workflow: the taskset's reward fn replaces math_boxed_reward", async () => {
  const task = makeTask(GSM8K_ROW, {
    workflow: "math_boxed_workflow",
    rewardFn: "math_dapo_reward",
    rolloutArgs: { n: 2 },
  });
  const { exps } = await run(task, ["Answer: 5", "Answer: 6"]);
  assertEquals(exps.map((e) => e.reward), [1, -1]);
});

Deno.test("math_rm_workflow: chats and scores with math unless the taskset names a judge", async () => {
  const task = makeTask(GSM8K_ROW, { workflow: "math_rm_workflow", rolloutArgs: { n: 2 } });
  const { model, exps } = await run(task, ["The answer is 5.", "7"]);
  assertEquals(model.calls[0].kind, "chat");
  assertEquals(exps.map((e) => e.reward), [1, 0]);
  const judged = makeTask(GSM8K_ROW, { workflow: "math_rm_workflow", rewardFn: "exact_match" });
  assertEquals((await run(judged, ["5"])).exps[0].reward, 0);
});

Deno.test("math_dapo_reward: +1 / -1 on the answer after </think>, plus DAPO's overlong penalty", async () => {
  const score = async (response: string, length: number, args = {}) => {
    const fn = configure(REWARD_FUNCTIONS, "math_dapo_reward", args);
    return await computeReward(fn, makeTask(GSM8K_ROW), response, length);
  };
  assertEquals(await score("<think>Answer: 4</think>\nAnswer: 5", 10), {
    reward: 1,
    metrics: { accuracy: 1, format_score: 0 },
  });
  assertEquals((await score("<think>Answer: 5</think> no answer", 10)).reward, -1);
  assertEquals((await score("\\boxed{\\frac{10}{2}}", 10)).reward, 1);
  // max 20, cache 4: no penalty up to 16 tokens, linear to -factor at 20, -factor beyond.
  const args = {
    enable_overlong_penalty: true,
    penalty_factor: 2,
    max_response_length: 20,
    cache_length: 4,
  };
  const penalties = [16, 17, 18, 20, 21].map((n) =>
    overlongPenalty(n, configure(REWARD_FUNCTIONS, "math_dapo_reward", args).args)
  );
  assertEquals(penalties, [0, -0.5, -1, -2, -2]);
  assertEquals(await score("Answer: 5", 18, args), {
    reward: 0,
    metrics: { accuracy: 1, format_score: -1 },
  });
  const { entry } = configure(REWARD_FUNCTIONS, "math_dapo_reward");
  assertThrows(
    () => entry.checkArgs!({ ...args, cache_length: 20 }),
    Error,
    'key "max_response_length" expected a number > cache_length (20), received 20',
  );
  assertThrows(
    () => entry.checkArgs!({ enable_overlong_penalty: true, max_response_length: 20 }),
    Error,
    'key "penalty_factor" expected a number when enable_overlong_penalty is true',
  );
});

Deno.test("reward_fn_args: the taskset's args reach its reward fn, over a workflow's defaults", async () => {
  const task = makeTask(GSM8K_ROW, { rewardFn: "math_dapo_reward", rolloutArgs: { n: 2 } });
  // "Answer: 5" + eos is 10 tokens: past max 12 - cache 4 = 8 by 2, penalty -2 / 4 * 1.
  const rewardFnArgs = {
    enable_overlong_penalty: true,
    penalty_factor: 1,
    max_response_length: 12,
    cache_length: 4,
  };
  const model = new ScriptedModel(["Answer: 5", "Answer: 4"]);
  const exps = await createWorkflow(task, { model, rewardFnArgs }).run();
  assertEquals(exps.map((e) => e.reward), [0.5, -1.5]);
  const boxed = makeTask(GSM8K_ROW, { workflow: "math_boxed_workflow" });
  const penalized = await createWorkflow(boxed, {
    model: new ScriptedModel(["\\boxed{5}"]),
    rewardFnArgs: { with_think: true },
  }).run();
  assertEquals(penalized[0].metrics, { accuracy: 1, format_score: -0.1 });
  assertThrows(
    () => createWorkflow(task, { model, rewardFnArgs: { penalty: 1 } }),
    Error,
    'Cannot configure reward fn "math_dapo_reward": unknown key "penalty"',
  );
});

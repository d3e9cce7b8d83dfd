import type { Experience } from "../../src/buffer/experience.ts";
import type { Task } from "../../src/buffer/task.ts";
import { configure } from "../../src/util/registry.ts";
import {
  createWorkflow,
  experienceFromRollout,
  REWARD_FUNCTIONS,
  WORKFLOWS,
} from "../../src/workflow/mod.ts";
import { MATH_SYSTEM_PROMPT } from "../../src/workflow/workflows/math_workflow.ts";
import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";
import { makeTask, scriptedLogprob, ScriptedModel, TOKENIZER } from "./_scripted_model.ts";

/** Runs `task`'s workflow on a model scripted with `replies`. */
async function run(task: Task, replies: string[]) {
  const model = new ScriptedModel(replies);
  model.policyVersion = 7;
  const exps = await createWorkflow(task, { model }).run();
  return { model, exps };
}

/** Checks that `exp` is `prompt` then `reply` + eos with the scripted model's log-probs. */
function assertSingleTurn(exp: Experience, prompt: number[], reply: string) {
  const response = [...TOKENIZER.encode(reply), TOKENIZER.eosId!];
  assertEquals(exp.tokens, [...prompt, ...response]);
  assertEquals(exp.promptLength, prompt.length);
  assertEquals(exp.actionMask, [...prompt.map(() => 0), ...response.map(() => 1)]);
  assertEquals(exp.logprobs, [
    ...prompt.map(() => 0),
    ...response.map((_, i) => scriptedLogprob(i)),
  ]);
  assertEquals(exp.responseText, reply);
  assertEquals(exp.promptText, TOKENIZER.decode(prompt));
}

const chatPrompt = (...contents: string[]) =>
  TOKENIZER.encode(`<bos>${contents.map((c) => `${c}<eos>`).join("")}`);

Deno.test("workflows: the registry lists the built-ins; a typo lists them with a suggestion", () => {
  assertEquals(WORKFLOWS.names(), [
    "async_math_boxed_workflow",
    "async_math_eval_workflow",
    "async_math_rm_workflow",
    "async_math_ruler_workflow",
    "async_math_workflow",
    "async_simple_workflow",
    "countdown",
    "frozen_lake_workflow",
    "guess_number",
    "math_boxed_workflow",
    "math_eval_workflow",
    "math_rm_workflow",
    "math_ruler_workflow",
    "math_trainable_ruler_workflow",
    "math_workflow",
    "on_policy_distill_math_workflow",
    "on_policy_distill_workflow",
    "rubric_judge_workflow",
    "simple_workflow",
    "sudoku_workflow",
    "tool_call_workflow",
    "toolcall_workflow",
  ]);
  const model = new ScriptedModel([]);
  assertThrows(
    () => createWorkflow(makeTask({}, { workflow: "math_workflo" }), { model }),
    Error,
    'Unknown workflow "math_workflo"; known: async_math_boxed_workflow, async_math_eval_workflow, async_math_rm_workflow, async_math_ruler_workflow, async_math_workflow, async_simple_workflow, countdown, frozen_lake_workflow, guess_number, math_boxed_workflow, math_eval_workflow, math_rm_workflow, math_ruler_workflow, math_trainable_ruler_workflow, math_workflow, on_policy_distill_math_workflow, on_policy_distill_workflow, rubric_judge_workflow, simple_workflow, sudoku_workflow, tool_call_workflow, toolcall_workflow. Did you mean "math_workflow"?',
  );
  assertThrows(
    () =>
      createWorkflow(
        makeTask({ question: "q", answer: "a" }, {
          workflow: "math_workflow",
          workflowArgs: { use_chat_templat: false },
        }),
        { model },
      ),
    Error,
    'Cannot configure workflow "math_workflow": unknown key "use_chat_templat"; known: system_prompt, use_chat_template. Did you mean "use_chat_template"?',
  );
});

Deno.test("workflows: experienceFromRollout stamps the task, run and policy version", () => {
  const task = makeTask({}, { isEval: true });
  const rollout = {
    promptTokens: [5, 6],
    responseTokens: [7, 8, 2],
    logprobs: [-0.5, -0.25, -1],
    text: "ab",
    finishReason: "stop" as const,
    policyVersion: 4,
  };
  const exp = experienceFromRollout(task, 2, rollout, 0.5, { metrics: { accuracy: 0 } });
  assertEquals(exp.tokens, [5, 6, 7, 8, 2]);
  assertEquals(exp.actionMask, [0, 0, 1, 1, 1]);
  assertEquals(exp.logprobs, [0, 0, -0.5, -0.25, -1]);
  assertEquals({ ...exp.info, eid: exp.info.eid.split("/").slice(0, 2).join("/") }, {
    taskId: "0.3",
    runId: 2,
    policyVersion: 4,
    eid: "0.3/2",
  });
  assertEquals([exp.reward, exp.metrics, exp.isEval, exp.responseText], [
    0.5,
    { accuracy: 0 },
    true,
    "ab",
  ]);
  assertThrows(
    () => experienceFromRollout(task, 0, { ...rollout, logprobs: [-1] }, 1),
    Error,
    'Invalid experience of task "0.3" run 0: "logprobs" has 3 entries; expected 5',
  );
});

Deno.test("workflows: simple_workflow samples n through the chat template and scores each", async () => {
  const task = makeTask({ question: "2+2?", answer: "4" }, {
    rewardFn: "exact_match",
    rolloutArgs: { n: 3, temperature: 0.7, maxTokens: 9 },
  });
  const { model, exps } = await run(task, ["4", " 4 ", "5"]);
  assertEquals(model.calls.length, 1);
  assertEquals(model.calls[0].kind, "chat");
  assertEquals(model.calls[0].options, { n: 3, temperature: 0.7, maxTokens: 9 });
  const prompt = chatPrompt("2+2?");
  assertEquals(model.calls[0].promptTokens, prompt);
  assertEquals(exps.map((e) => e.reward), [1, 1, 0]);
  assertEquals(exps.map((e) => e.metrics), [{ accuracy: 1 }, { accuracy: 1 }, { accuracy: 0 }]);
  assertEquals(exps.map((e) => [e.info.taskId, e.info.runId, e.info.policyVersion]), [
    ["0.3", 0, 7],
    ["0.3", 1, 7],
    ["0.3", 2, 7],
  ]);
  assertEquals(new Set(exps.map((e) => e.info.eid)).size, 3);
  exps.forEach((exp, i) => assertSingleTurn(exp, prompt, ["4", " 4 ", "5"][i]));
  assertEquals(exps.every((e) => e.isEval === false), true);
});

Deno.test("workflows: use_chat_template false sends the raw prompt to generate", async () => {
  const task = makeTask({ question: "Q: 1+1=", answer: "2" }, {
    rewardFn: "exact_match",
    workflowArgs: { use_chat_template: false },
  });
  const { model, exps } = await run(task, ["2"]);
  assertEquals(model.calls[0].kind, "generate");
  assertSingleTurn(exps[0], TOKENIZER.encode("Q: 1+1="), "2");
  assertEquals(exps[0].reward, 1);
});

Deno.test("workflows: simple_workflow takes the context's reward fn and needs one", async () => {
  const task = makeTask({ question: "q", answer: "yes" }, { rewardFn: "math" });
  const rewardFn = configure(REWARD_FUNCTIONS, "exact_match", { case_sensitive: false });
  const model = new ScriptedModel(["YES"]);
  const [exp] = await createWorkflow(task, { model, rewardFn }).run();
  assertEquals(exp.reward, 1);
  assertThrows(
    () => createWorkflow(makeTask({ question: "q" }), { model }),
    Error,
    'Cannot run task "0.3" with workflow "simple_workflow": it needs a reward fn; set the taskset\'s "default_reward_fn_type" (known: accuracy_reward, countdown, countdown_reward, exact_match, format, format_reward, math, math_boxed_reward, math_dapo_reward, math_reward, rlcr_reward, rm_gallery_reward, toolcall_reward)',
  );
});

Deno.test("workflows: math_workflow adds the \\boxed{} system prompt and scores with math", async () => {
  const task = makeTask({ question: "Half of 1?", answer: "0.5" }, {
    workflow: "math_workflow",
    rolloutArgs: { n: 2 },
  });
  const { model, exps } = await run(task, ["so \\boxed{1/2}", "\\boxed{2}"]);
  const prompt = chatPrompt(MATH_SYSTEM_PROMPT, "Half of 1?");
  assertEquals(model.calls[0].promptTokens, prompt);
  assertEquals(exps.map((e) => e.reward), [1, 0]);
  assertSingleTurn(exps[1], prompt, "\\boxed{2}");

  const own = makeTask({ question: "q", answer: "1" }, {
    workflow: "math_workflow",
    formatArgs: { promptKey: "question", responseKey: "answer", systemPrompt: "Mine." },
  });
  assertEquals((await run(own, ["1"])).model.calls[0].promptTokens, chatPrompt("Mine.", "q"));
  const none = makeTask({ question: "q", answer: "1" }, {
    workflow: "math_workflow",
    workflowArgs: { system_prompt: "" },
  });
  assertEquals((await run(none, ["1"])).model.calls[0].promptTokens, chatPrompt("q"));
});

Deno.test("workflows: countdown builds its prompt from the row and scores with countdown", async () => {
  const task = makeTask({ target: 4, nums: [6, 3, 2] }, {
    workflow: "countdown",
    rolloutArgs: { n: 3 },
  });
  const { model, exps } = await run(task, [
    "<answer>6 / 3 * 2</answer>",
    "<answer>6 - 2</answer>",
    "four",
  ]);
  const prompt = TOKENIZER.decode(model.calls[0].promptTokens);
  assertEquals(
    prompt.includes("Using the numbers [6, 3, 2], create an equation that equals 4."),
    true,
  );
  assertEquals(exps.map((e) => e.reward), [1, 0.1, 0]);
  assertEquals(exps.map((e) => e.metrics?.accuracy), [1, 0, 0]);

  const raw = makeTask(task.rawTask, { ...task, workflowArgs: { use_chat_template: false } });
  const base = await run(raw, ["<answer>6 / 3 * 2</answer>", "", ""]);
  assertEquals(base.model.calls[0].kind, "generate");
  assertEquals(TOKENIZER.decode(base.model.calls[0].promptTokens).endsWith("<think>"), true);
});

Deno.test("workflows: a malformed row or a failing reward fn names the task", async () => {
  const model = new ScriptedModel(["x"]);
  assertThrows(
    () =>
      createWorkflow(makeTask({ target: "24", nums: [1] }, { workflow: "countdown" }), { model }),
    Error,
    'Task "0.3" has "target" = "24"; expected a number',
  );
  assertThrows(
    () => createWorkflow(makeTask({ prompt: "q" }, { rewardFn: "math" }), { model }),
    Error,
    'Task "0.3" has no "question" (prompt_key)',
  );
  const noAnswer = makeTask({ question: "q" }, { workflow: "math_workflow" });
  await assertRejects(
    () => createWorkflow(noAnswer, { model }).run(),
    Error,
    'Cannot score task "0.3" with reward fn "math": Task "0.3" has no "answer" (response_key)',
  );
});

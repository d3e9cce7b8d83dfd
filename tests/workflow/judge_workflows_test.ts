/**
 * Trinity's judged and distilled workflows against scripted models: math_eval_workflow (Qwen
 * math prompt, fixed sampling), math_ruler_workflow (a judge scores the group), the trainable
 * RULER (the policy judges itself), rubric_judge_workflow (a 1-10 rating per answer) and the
 * on-policy distillation workflows (teacher log-probs of the student's tokens).
 */

import { AuxiliaryModels } from "../../src/auxiliary/auxiliary_models.ts";
import { createWorkflow } from "../../src/workflow/mod.ts";
import { rulerScores } from "../../src/workflow/workflows/math_ruler.ts";
import { rubricScore } from "../../src/workflow/workflows/rubric_judge.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { makeTask, ScriptedModel, TOKENIZER } from "./_scripted_model.ts";

/** Auxiliary models holding one scripted generator `judge` (whose teacher log-probs are -t/10). */
function auxiliary(judge: ScriptedModel): AuxiliaryModels {
  const model = {
    logprobs: (seqs: number[][]) =>
      Promise.resolve(seqs.map((s) => s.slice(1).map((_, t) => -(t + 1) / 10))),
    destroy() {},
  };
  const entry = { kind: "generator", rollout: Object.assign(judge, { model }), model };
  return new AuxiliaryModels(new Map([["judge", entry as never]]));
}

const ROW = { question: "What is 2 + 4?", answer: "#### 6" };

Deno.test("math_eval_workflow: Qwen's math prompt, one sample at temperature 0.6, accuracy", async () => {
  const model = new ScriptedModel(["so \\boxed{6}"]);
  const task = makeTask(ROW, { workflow: "math_eval_workflow", rolloutArgs: { n: 4 } });
  const [exp, ...rest] = await createWorkflow(task, { model }).run();
  assertEquals(rest.length, 0);
  assertEquals([exp.reward, exp.metrics], [1, { accuracy: 1 }]);
  const { options } = model.calls[0];
  assertEquals([options.n, options.temperature, options.topP], [1, 0.6, 0.8]);
  const prompt = TOKENIZER.decode(model.calls[0].promptTokens);
  assertEquals(prompt.includes("What is 2 + 4?\nPlease reason step by step"), true);
});

Deno.test("rulerScores / rubricScore: parse the judge's reply as Trinity does", () => {
  assertEquals(rulerScores("thinking... [0.5, 2, -1]", 3), [0.5, 1, 0]);
  assertEquals(rulerScores("[0.5] and [0.1, 0.2]", 2), [0.1, 0.2]);
  assertEquals([rulerScores("[0.5]", 2), rulerScores("none", 1)], [undefined, undefined]);
  assertEquals(rubricScore('```json\n{"rating": 7}\n```'), 0.7000000000000001);
  assertEquals(rubricScore('```\n{"rating": 3}```'), 0.30000000000000004);
  assertEquals([rubricScore('```json\n{"rating": 11}```'), rubricScore("7")], [
    undefined,
    undefined,
  ]);
});

Deno.test("math_ruler_workflow: the judge's scores are the rewards; math_reward is the gold", async () => {
  const model = new ScriptedModel(["<think>x</think><answer>6</answer>", "7"]);
  const judge = new ScriptedModel(["I think [0.9, 0.2]"]);
  const task = makeTask(ROW, { workflow: "math_ruler_workflow", rolloutArgs: { n: 2 } });
  const exps = await createWorkflow(task, { model, auxiliaryModels: auxiliary(judge) }).run();
  assertEquals(exps.map((e) => e.reward), [0.9, 0.2]);
  assertEquals(exps.map((e) => e.metrics?.gold_reward), [1.1, -0.1]);
  assertEquals(exps[0].metrics?.judge_success, 1);
  const asked = TOKENIZER.decode(judge.calls[0].promptTokens);
  assertEquals(asked.includes("Candidate solution 2: 7"), true);
  assertThrows(
    () => createWorkflow(task, { model }),
    Error,
    "it needs a judge, the first of explorer.auxiliary_models",
  );
});

Deno.test("math_trainable_ruler_workflow: with the gold known, judgements become experiences", async () => {
  const model = new ScriptedModel((prompt) =>
    prompt.includes("fair judge") ? "[1, 0]" : prompt.includes("7") ? "x" : "<answer>6</answer>"
  );
  const task = makeTask(ROW, {
    workflow: "math_trainable_ruler_workflow",
    rolloutArgs: { n: 2 },
    workflowArgs: { ground_truth_probability: 1 },
  });
  const exps = await createWorkflow(task, { model }).run();
  assertEquals(exps.length, 4);
  // Answers: gold rewards (math_reward: accuracy 1, format -0.1 -> 0.9).
  assertEquals(exps.slice(0, 2).map((e) => e.reward), [0.9, 0.9]);
  // Judgements of task "0.3-ruler": 1 - mean |[1, 0] - scaled gold (1 / 1.2 each)|.
  const scaled = 1 / 1.2;
  const judged = 1 - (Math.abs(1 - scaled) + scaled) / 2;
  assertEquals(exps.slice(2).map((e) => [e.info.taskId, e.reward]), [
    ["0.3-ruler", judged],
    ["0.3-ruler", judged],
  ]);
});

Deno.test("rubric_judge_workflow: each answer rated 1-10 against the row's rubric", async () => {
  const model = new ScriptedModel(["a", "b"]);
  const judge = new ScriptedModel(['```json\n{"rating": 8}\n```', "no rating"]);
  const row = {
    question: "Treat a cold?",
    answer: "rest",
    rubric: [{ description: "safe", weight: 2 }],
  };
  const task = makeTask(row, { workflow: "rubric_judge_workflow", rolloutArgs: { n: 2 } });
  const exps = await createWorkflow(task, { model, auxiliaryModels: auxiliary(judge) }).run();
  assertEquals(exps.map((e) => e.reward), [0.8, 0]);
  assertEquals(exps[0].metrics, { judge_success: 0.5 });
  const asked = TOKENIZER.decode(judge.calls[0].promptTokens);
  assertEquals(asked.includes("Rubric 0 (weight: 2): safe"), true);
  assertEquals(judge.calls[0].options.temperature, 0);
});

Deno.test("on_policy_distill_math_workflow: teacher log-probs on the response tokens", async () => {
  const model = new ScriptedModel(["\\boxed{6}"]);
  const teacher = new ScriptedModel([]);
  const task = makeTask(ROW, { workflow: "on_policy_distill_math_workflow" });
  const [exp] = await createWorkflow(task, { model, auxiliaryModels: auxiliary(teacher) }).run();
  assertEquals([exp.reward, exp.metrics?.accuracy], [1, 1]);
  // The fake teacher gives token t the log-prob -t / 10; 0 off the action mask.
  assertEquals(
    exp.teacherLogprobs,
    exp.tokens.map((_, t) => (exp.actionMask[t] ? -t / 10 : 0)),
  );
  const kl = exp.actionMask.reduce((s, m, t) => s + (m ? exp.logprobs[t] + t / 10 : 0), 0);
  assertEquals(Math.abs(exp.metrics!.kl_divergence - kl) < 1e-9, true);
  const plain = makeTask(ROW, { workflow: "on_policy_distill_workflow" });
  const [zero] = await createWorkflow(plain, {
    model: new ScriptedModel(["x"]),
    auxiliaryModels: auxiliary(teacher),
  }).run();
  assertEquals(zero.reward, 0);
});

import { configure } from "../../src/util/registry.ts";
import { evaluateArithmetic } from "../../src/workflow/rewards/expression.ts";
import {
  computeReward,
  REWARD_FUNCTIONS,
  type RewardFnFactory,
  type RewardResult,
} from "../../src/workflow/rewards/mod.ts";
import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";
import { makeTask } from "./_scripted_model.ts";

/** Scores `response` with reward fn `name` and `args` against a row. */
function score(
  name: string,
  response: string,
  rawTask: Record<string, unknown>,
  args: Record<string, unknown> = {},
): Promise<RewardResult> {
  return computeReward(configure(REWARD_FUNCTIONS, name, args), makeTask(rawTask), response);
}

const reward = async (name: string, response: string, row: Record<string, unknown>, args = {}) =>
  (await score(name, response, row, args)).reward;

Deno.test("rewards: the registry lists the built-ins; a typo lists them with a suggestion", () => {
  assertEquals(REWARD_FUNCTIONS.names(), [
    "accuracy_reward",
    "countdown",
    "countdown_reward",
    "exact_match",
    "format",
    "format_reward",
    "math",
    "math_boxed_reward",
    "math_dapo_reward",
    "math_reward",
    "rlcr_reward",
    "rm_gallery_reward",
    "toolcall_reward",
  ]);
  assertThrows(
    () => REWARD_FUNCTIONS.get("mathh"),
    Error,
    'Unknown reward fn "mathh"; known: accuracy_reward, countdown, countdown_reward, exact_match, format, format_reward, math, math_boxed_reward, math_dapo_reward, math_reward, rlcr_reward, rm_gallery_reward, toolcall_reward. Did you mean "math"?',
  );
  assertThrows(
    () => configure(REWARD_FUNCTIONS, "math", { correct: 2 }),
    Error,
    'Cannot configure reward fn "math": unknown key "correct"',
  );
});

Deno.test("rewards: exact_match trims, and folds case only when told", async () => {
  const row = { answer: "Paris" };
  assertEquals(await score("exact_match", "  Paris\n", row), {
    reward: 1,
    metrics: { accuracy: 1 },
  });
  assertEquals(await score("exact_match", "paris", row), { reward: 0, metrics: { accuracy: 0 } });
  assertEquals(await reward("exact_match", "paris", row, { case_sensitive: false }), 1);
  assertEquals(await reward("exact_match", "Paris.", row, { case_sensitive: false }), 0);
  assertEquals(await reward("exact_match", "7", { answer: 7 }, { correct_reward: 2 }), 2);
});

Deno.test("rewards: math rewards the right final answer and counts accuracy", async () => {
  const row = { answer: "0.5" };
  assertEquals(await score("math", "Half: \\boxed{1/2}", row), {
    reward: 1,
    metrics: { accuracy: 1 },
  });
  assertEquals(await score("math", "I get 0.5 then 3", row), {
    reward: 0,
    metrics: { accuracy: 0 },
  });
  assertEquals(await reward("math", "<answer>1/2</answer> not 3", row), 1);
  assertEquals(await reward("math", "no idea", row, { wrong_reward: -1 }), -1);
  assertEquals(await reward("math", "\\boxed{1,000,000}", { answer: 1000000 }), 1);
});

Deno.test("rewards: math without a reference answer names the task", async () => {
  await assertRejects(
    () => score("math", "\\boxed{1}", { question: "1+0?" }),
    Error,
    'Cannot score task "0.3" with reward fn "math": Task "0.3" has no "answer" (response_key)',
  );
});

Deno.test("rewards: format matches <think>...</think><answer>...</answer> or a given pattern", async () => {
  const ok = "<think>a\nb</think>\n<answer>4</answer>";
  assertEquals(await score("format", ok, {}), { reward: 1, metrics: { format_score: 1 } });
  assertEquals(await reward("format", `${ok} trailing`, {}), 0);
  assertEquals(await reward("format", "<answer>4</answer>", {}), 0);
  assertEquals(await reward("format", "ANSWER: 4", {}, { pattern: "^ANSWER: \\d+$" }), 1);
});

Deno.test("rewards: the arithmetic parser evaluates + - * / and parentheses, without eval", () => {
  assertEquals(evaluateArithmetic("(1 + 2) / 3"), { value: 1, numbers: [1, 2, 3] });
  assertEquals(evaluateArithmetic("2 + 3 * 4 - 6 / 2"), { value: 11, numbers: [2, 3, 4, 6, 2] });
  assertEquals(evaluateArithmetic("-(2 - 5) * 2"), { value: 6, numbers: [2, 5, 2] });
  assertEquals(evaluateArithmetic("7 / 2"), { value: 3.5, numbers: [7, 2] });
  for (const bad of ["", "1 +", "(1 + 2", "1 + 2)", "2 ** 3", "1.5 + 2", "x + 1", "alert(1)"]) {
    assertEquals(evaluateArithmetic(bad), undefined, JSON.stringify(bad));
  }
});

Deno.test("rewards: countdown scores TinyZero's way", async () => {
  const row = { target: 24, nums: [3, 4, 8, 1] };
  const [right, wellFormed, malformed] = [
    { accuracy: 1, format_score: 1 },
    { accuracy: 0, format_score: 1 },
    { accuracy: 0, format_score: 0 },
  ];
  const cases: [string, number, Record<string, number>][] = [
    ["<think>4 is 1 + 3</think><answer>(1 + 3) * 4 + 8</answer>", 1, right],
    ["<answer>3 * 8</answer> no: <answer>8 + 4 * (3 + 1)</answer>", 1, right],
    ["<answer>4 * 4 + 8</answer>", 0.1, wellFormed], // 4 twice, 1 and 3 unused
    ["<answer>(1 + 3) * 4 - 8</answer>", 0.1, wellFormed], // wrong value
    ["<answer>3 * 8</answer>", 0.1, wellFormed], // 4 and 1 unused
    ["<answer>8 / (4 - 3 - 1)</answer>", 0.1, wellFormed], // division by zero
    ["<answer>3 * 8 = 24</answer>", 0, malformed],
    ["(1 + 3) * 4 + 8", 0, malformed], // no <answer>
  ];
  for (const [response, expected, metrics] of cases) {
    assertEquals(await score("countdown", response, row), { reward: expected, metrics }, response);
  }
});

Deno.test("rewards: countdown accepts division, rejects reuse, and reports malformed rows", async () => {
  const row = { target: 4, nums: [6, 3, 2] };
  assertEquals(await reward("countdown", "<answer>6 / 3 * 2</answer>", row), 1);
  assertEquals(await reward("countdown", "<answer>6 / (3 / 2)</answer>", row), 1);
  assertEquals(await reward("countdown", "<answer>2 + 2</answer>", row), 0.1);
  assertEquals(await reward("countdown", "<answer>6 - 2</answer>", row, { format_score: 0 }), 0);
  await assertRejects(
    () => score("countdown", "<answer>1</answer>", { target: 4, nums: [1.5] }),
    Error,
    'Cannot score task "0.3" with reward fn "countdown": Task "0.3" has "nums" = [1.5]',
  );
  await assertRejects(
    () => score("countdown", "<answer>1</answer>", { nums: [1] }),
    Error,
    'has "target" = undefined; expected a number',
  );
});

Deno.test("rewards: computeReward names the task when a fn throws or returns a non-number", async () => {
  const fn = (compute: RewardFnFactory["compute"]) => ({
    name: "mine",
    entry: { description: "test", defaultArgs: {}, compute },
    args: {},
  });
  const task = makeTask({});
  await assertRejects(
    () =>
      computeReward(
        fn(() => {
          throw new Error("boom");
        }),
        task,
        "x",
      ),
    Error,
    'Cannot score task "0.3" with reward fn "mine": boom',
  );
  await assertRejects(
    () => computeReward(fn(() => ({ reward: NaN, metrics: {} })), task, "x"),
    Error,
    'Cannot score task "0.3" with reward fn "mine": it returned reward NaN',
  );
});

Deno.test("countdown_reward: Trinity's JSON puzzle in the reference, the last line's answer", async () => {
  const row = { question: "?", answer: JSON.stringify({ numbers: [3, 5, 7], target: 22 }) };
  assertEquals(await score("countdown_reward", "so\n<answer>3 * 5 + 7</answer>", row), {
    reward: 1,
    metrics: { score: 1, accuracy: 1 },
  });
  // Wrong value, a number used twice, and an answer on an earlier line only.
  assertEquals(await reward("countdown_reward", "<answer>3 + 5 + 7</answer>", row), 0.1);
  assertEquals(await reward("countdown_reward", "<answer>3 * 5 + 7 + 3</answer>", row), 0.1);
  assertEquals(await reward("countdown_reward", "<answer>3*5+7</answer>\ndone", row), 0);
  await assertRejects(
    () => score("countdown_reward", "<answer>1</answer>", { question: "?", answer: "22" }),
    Error,
    'expected the reference answer to be JSON {"numbers": [...], "target": N}',
  );
});

Deno.test("math_reward, accuracy_reward, format_reward: Trinity's scores", async () => {
  const row = { question: "1 + 5?", answer: "#### 6" };
  const formatted = "<think>add</think>\n<answer>6</answer>";
  assertEquals(await score("math_reward", formatted, row), {
    reward: 1.1,
    metrics: { accuracy: 1, format_score: 0.1 },
  });
  assertEquals(await score("math_reward", "it is 7", row), {
    reward: -0.1,
    metrics: { accuracy: 0, format_score: -0.1 },
  });
  assertEquals(await score("accuracy_reward", "\\boxed{6}", row), {
    reward: 1,
    metrics: { accuracy: 1 },
  });
  // format_reward: each tag on its own line, matched from the start (text may follow).
  assertEquals(
    await reward("format_reward", "<think>\nx\n</think>\n<answer>\n6\n</answer>\nok", row),
    0.1,
  );
  assertEquals(await reward("format_reward", formatted, row), -0.1);
});

Deno.test("rm_gallery_reward: math_verify_reward is the math verifier; others name RM-Gallery", async () => {
  const row = { question: "?", answer: "6" };
  const args = { reward_name: "math_verify_reward" };
  assertEquals(await score("rm_gallery_reward", "\\boxed{6}", row, args), {
    reward: 1,
    metrics: { math_verify: 1 },
  });
  const { entry, args: other } = configure(REWARD_FUNCTIONS, "rm_gallery_reward", {
    reward_name: "helpfulness_listwise_reward",
  });
  assertThrows(() => entry.checkArgs!(other), Error, "needs the RM-Gallery library (Python)");
});

Deno.test("rlcr_reward: weighted format, accuracy, Brier and confidence terms", async () => {
  const row = { question: "?", answer: "6" };
  const good =
    "<think>t</think><answer>6</answer> <analysis>ok</analysis><confidence>0.8</confidence>";
  const result = await score("rlcr_reward", good, row);
  const expected = {
    format: 0.5,
    accuracy: 0.5,
    brier: 0.5 * (1 - 0.2 ** 2),
    mean_confidence: 0.8e-5,
    confidence_one_or_zero: 0,
  };
  assertEquals(Object.keys(result.metrics), Object.keys(expected));
  for (const [k, v] of Object.entries(expected)) {
    assertEquals(Math.abs(result.metrics[k] - v) < 1e-12, true, k);
  }
  // A wrong answer at confidence 1: Brier 0, the extreme-confidence term set.
  const wrong = await score(
    "rlcr_reward",
    good.replace("6</answer>", "7</answer>").replace("0.8", "1"),
    row,
    {
      weights: { format: 1, accuracy: 1, brier: 1, mean_confidence: 0, confidence_one_or_zero: 1 },
    },
  );
  assertEquals(wrong.metrics, {
    format: 1,
    accuracy: 0,
    brier: 0,
    mean_confidence: 0,
    confidence_one_or_zero: 1,
  });
  // Text after the chain, or a broken order: no format, but the last confidence still counts.
  const trailing = await score("rlcr_reward", good + " more", row, {
    weights: { format: 1, accuracy: 1, brier: 1, mean_confidence: 1, confidence_one_or_zero: 1 },
  });
  assertEquals([trailing.metrics.format, trailing.metrics.mean_confidence], [0, 0.8]);
  assertThrows(
    () => configure(REWARD_FUNCTIONS, "rlcr_reward", { weights: { fromat: 1 } }),
    Error,
    'unknown key "weights.fromat"',
  );
});

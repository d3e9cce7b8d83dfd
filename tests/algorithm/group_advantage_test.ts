/**
 * The group advantage fns (grpo, rloo, reinforce, opmd) on one small step, against values worked
 * out by hand in the comments: a group of three, a null reward, a group of one, a group of equal
 * rewards and a group holding a fully masked sequence.
 */

import type { AdvantageSample } from "../../src/algorithm/advantage/mod.ts";
import { ADVANTAGE_FN } from "../../src/algorithm/advantage/mod.ts";
import { configure } from "../../src/util/registry.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";

const STEP: AdvantageSample[] = [
  { groupId: "a", reward: 1, actionMask: [1, 1, 0] },
  { groupId: "a", reward: 2, actionMask: [1, 1] },
  { groupId: "a", reward: 3, actionMask: [0, 1, 1, 1] },
  { groupId: "a", reward: null, actionMask: [1] }, // not applicable: skipped, not counted
  { groupId: "b", reward: 5, actionMask: [1, 1] }, // a group of one
  { groupId: "c", reward: 0.5, actionMask: [1] }, // all rewards equal
  { groupId: "c", reward: 0.5, actionMask: [1] },
  { groupId: "d", reward: 2, actionMask: [0, 0] }, // fully masked
  { groupId: "d", reward: 0, actionMask: [1, 1] },
];
const EPS = 1e-6;
// The counted rewards: 1, 2, 3, 5, 0.5, 0.5, 2, 0 -> mean 14 / 8 = 1.75.
const REWARD_MEAN = 1.75;

function advantages(name: string, args: Record<string, unknown> = {}) {
  const { entry, args: resolved } = configure(ADVANTAGE_FN, name, args);
  return entry.compute(STEP, resolved);
}

/** Checks per-sequence values and that each is broadcast over its action tokens. */
function expectScores(
  result: ReturnType<typeof advantages>,
  expected: number[],
  skipped: number[],
  label: string,
) {
  assertClose(result.perSequence ?? [], expected, { atol: 1e-12, rtol: 1e-12, label });
  STEP.forEach((s, i) => {
    const tokens = Array.from(s.actionMask, (m) => m * expected[i]);
    assertClose(result.perToken[i], tokens, { atol: 1e-7, rtol: 1e-6, label: `${label} #${i}` });
    assertClose(result.returns[i], tokens, { atol: 1e-7, rtol: 1e-6, label: `${label} ret #${i}` });
  });
  assertEquals(result.skipped, STEP.map((_, i) => skipped.includes(i)), label);
  assertEquals(result.metrics.skipped_count, skipped.length, label);
}

Deno.test("grpo: (r - group mean) / (group std + eps), unbiased std", () => {
  // a: mean 2, std sqrt((1 + 0 + 1) / 2) = 1.  c: std 0 -> 0 / eps = 0.
  // d: mean 1, std sqrt((1 + 1) / 1) = sqrt(2); the fully masked sample keeps its score but
  // has no action tokens.
  const r2 = Math.SQRT2 + EPS;
  const result = advantages("grpo");
  expectScores(
    result,
    [-1 / (1 + EPS), 0, 1 / (1 + EPS), 0, 0, 0, 0, 1 / r2, -1 / r2],
    [3, 4],
    "grpo",
  );
  assertEquals(result.perToken[7], new Float32Array(2));
  assertClose([result.metrics.reward_mean], [REWARD_MEAN], { label: "reward_mean" });
});

Deno.test("grpo: std_threshold skips groups at or below it; std_norm batch and none", () => {
  // std_threshold 0 skips c (std 0); 1 also skips a (std exactly 1).
  const r2 = Math.SQRT2 + EPS;
  expectScores(
    advantages("grpo", { std_threshold: 0 }),
    [-1 / (1 + EPS), 0, 1 / (1 + EPS), 0, 0, 0, 0, 1 / r2, -1 / r2],
    [3, 4, 5, 6],
    "threshold 0",
  );
  expectScores(
    advantages("grpo", { std_threshold: 1 }),
    [0, 0, 0, 0, 0, 0, 0, 1 / r2, -1 / r2],
    [0, 1, 2, 3, 4, 5, 6],
    "threshold 1",
  );
  // Batch std of the 8 counted rewards around 1.75: squared deviations 0.5625, 0.0625, 1.5625,
  // 10.5625, 1.5625, 1.5625, 0.0625, 3.0625 sum to 19, over 7.
  const batch = Math.sqrt(19 / 7) + EPS;
  expectScores(
    advantages("grpo", { std_norm: "batch" }),
    [-1 / batch, 0, 1 / batch, 0, 0, 0, 0, 1 / batch, -1 / batch],
    [3, 4],
    "batch std",
  );
  expectScores(
    advantages("grpo", { std_norm: "none" }),
    [-1, 0, 1, 0, 0, 0, 0, 1, -1],
    [3, 4],
    "dr_grpo",
  );
  assertThrows(
    () => advantages("grpo", { std_norm: "sample" }),
    Error,
    'key "std_norm" expected one of group, batch, none',
  );
});

Deno.test("rloo: reward minus the mean of the rest of its group; a group of one gets 0", () => {
  // a: sum 6, n 3: 1 - 5/2, 2 - 4/2, 3 - 3/2.  c: 0.5 - 0.5.  d: 2 - 0, 0 - 2.
  expectScores(advantages("rloo"), [-1.5, 0, 1.5, 0, 0, 0, 0, 2, -2], [3, 4], "rloo");
});

Deno.test("reinforce: the reward, or minus the batch mean", () => {
  expectScores(advantages("reinforce"), [1, 2, 3, 0, 5, 0.5, 0.5, 2, 0], [3], "reinforce");
  expectScores(
    advantages("reinforce", { baseline: "batch_mean" }),
    [1, 2, 3, 0, 5, 0.5, 0.5, 2, 0].map((r, i) => i === 3 ? 0 : r - REWARD_MEAN),
    [3],
    "batch_mean",
  );
});

Deno.test("opmd: mean and logavgexp baselines", () => {
  expectScores(advantages("opmd"), [-1, 0, 1, 0, 0, 0, 0, 1, -1], [3, 4], "opmd mean");
  // tau = 2: baseline 2 * log(mean(exp(r / 2))) per group; equal rewards give the reward itself.
  const e = Math.exp;
  const ba = 2 * Math.log((e(0.5) + e(1) + e(1.5)) / 3);
  const bd = 2 * Math.log((e(1) + e(0)) / 2);
  expectScores(
    advantages("opmd", { opmd_baseline: "logavgexp", tau: 2 }),
    [1 - ba, 2 - ba, 3 - ba, 0, 0, 0, 0, 2 - bd, 0 - bd],
    [3, 4],
    "opmd logavgexp",
  );
  assertThrows(() => advantages("opmd", { tau: 0 }), Error, 'key "tau" expected > 0, received 0');
});

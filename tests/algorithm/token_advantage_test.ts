/**
 * The token-level advantage fns (ppo's GAE, reinforceplusplus) and KL-penalised token rewards,
 * against recursions worked out by hand in the comments, with an observation token inside a
 * sequence, a fully masked sequence and a null reward.
 */

import type { AdvantageSample } from "../../src/algorithm/advantage/mod.ts";
import { ADVANTAGE_FN, klPenalizedRewards } from "../../src/algorithm/advantage/mod.ts";
import { configure } from "../../src/util/registry.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";

const TOL = { atol: 1e-6, rtol: 1e-6 };

function compute(name: string, samples: AdvantageSample[], args: Record<string, unknown>) {
  const { entry, args: resolved } = configure(ADVANTAGE_FN, name, args);
  return entry.compute(samples, resolved);
}

/** `(x - mean) / sqrt(var + 1e-8)` with the unbiased variance of `pool`. */
function whitener(pool: number[]): (x: number) => number {
  const mean = pool.reduce((a, b) => a + b, 0) / pool.length;
  const variance = pool.reduce((a, x) => a + (x - mean) ** 2, 0) / (pool.length - 1);
  return (x) => (x - mean) / Math.sqrt(variance + 1e-8);
}

Deno.test("ppo: GAE over action tokens, returns = A + V, advantages whitened over the step", () => {
  const samples: AdvantageSample[] = [
    { groupId: 0, reward: 1, actionMask: [1, 1, 1], values: [0.5, 0.4, 0.2] },
    // The middle token is an observation: skipped by the recursion (its value 9 is unused).
    { groupId: 1, reward: 2, actionMask: [1, 0, 1], values: [0.3, 9, 0.1] },
    { groupId: 2, reward: 1, actionMask: [0, 0], values: [1, 1] },
    { groupId: 3, reward: null, actionMask: [1], values: [0] },
  ];
  // gamma 0.9, lam 0.8 (gamma * lam = 0.72); the reward sits on the last action token.
  // #0: t2: delta = 1 - 0.2 = 0.8 -> A = 0.8, R = 1.0
  //     t1: delta = 0.9 * 0.2 - 0.4 = -0.22 -> A = -0.22 + 0.72 * 0.8 = 0.356, R = 0.756
  //     t0: delta = 0.9 * 0.4 - 0.5 = -0.14 -> A = -0.14 + 0.72 * 0.356 = 0.11632, R = 0.61632
  // #1: t2: delta = 2 - 0.1 = 1.9 -> A = 1.9, R = 2.0
  //     t0: delta = 0.9 * 0.1 - 0.3 = -0.21 -> A = -0.21 + 0.72 * 1.9 = 1.158, R = 1.458
  const result = compute("ppo", samples, { gamma: 0.9, lam: 0.8 });
  const w = whitener([0.11632, 0.356, 0.8, 1.158, 1.9]);
  assertClose(result.perToken[0], [w(0.11632), w(0.356), w(0.8)], { ...TOL, label: "A #0" });
  assertClose(result.perToken[1], [w(1.158), 0, w(1.9)], { ...TOL, label: "A #1" });
  assertClose(result.returns[0], [0.61632, 0.756, 1.0], { ...TOL, label: "R #0" });
  assertClose(result.returns[1], [1.458, 0, 2.0], { ...TOL, label: "R #1" });
  for (const i of [2, 3]) {
    assertEquals([...result.perToken[i], ...result.returns[i]].every((v) => v === 0), true);
  }
  assertEquals(result.skipped, [false, false, false, true]);
  assertEquals(result.perSequence, null);
});

Deno.test("ppo: gamma = lam = 1 gives reward-to-go minus value; missing values are an error", () => {
  // One sample: A_t = 1 - V_t (the only reward is 1 at the end), before whitening.
  const samples = [{ groupId: 0, reward: 1, actionMask: [1, 1], values: [0.25, 0.75] }];
  const w = whitener([0.75, 0.25]);
  const result = compute("ppo", samples, {});
  assertClose(result.perToken[0], [w(0.75), w(0.25)], { ...TOL, label: "A" });
  assertClose(result.returns[0], [1, 1], { ...TOL, label: "R" });
  assertThrows(
    () => compute("ppo", [{ groupId: 0, reward: 1, actionMask: [1] }], {}),
    Error,
    'Cannot compute advantage fn "ppo": sample 0 has no values (critic values per token)',
  );
  assertThrows(
    () => compute("ppo", [{ groupId: 0, reward: 1, actionMask: [1], values: [1, 2] }], {}),
    Error,
    "sample 0 has values of length 2, expected 1 (its actionMask length)",
  );
});

Deno.test("reinforceplusplus: discounted returns, whitened over all action tokens", () => {
  const samples: AdvantageSample[] = [
    { groupId: 0, reward: 1, actionMask: [1, 1, 1] },
    { groupId: 0, reward: -1, actionMask: [1, 1, 0] },
    { groupId: 1, reward: null, actionMask: [1, 1] },
    { groupId: 1, reward: 4, actionMask: [0] }, // fully masked: the reward has no token
  ];
  // gamma 0.5. #0: rewards [0, 0, 1] -> G = [0.25, 0.5, 1].
  // #1: the last action token is t1: rewards [0, -1, 0] -> G = [-0.5, -1, 0].
  const result = compute("reinforceplusplus", samples, { gamma: 0.5 });
  const w = whitener([0.25, 0.5, 1, -0.5, -1]);
  assertClose(result.perToken[0], [w(0.25), w(0.5), w(1)], { ...TOL, label: "A #0" });
  assertClose(result.perToken[1], [w(-0.5), w(-1), 0], { ...TOL, label: "A #1" });
  assertClose(result.returns[0], [0.25, 0.5, 1], { ...TOL, label: "G #0" });
  assertClose(result.returns[1], [-0.5, -1, 0], { ...TOL, label: "G #1" });
  assertEquals([...result.perToken[2], ...result.perToken[3]], [0, 0, 0]);
  assertEquals(result.skipped, [false, false, true, false]);
});

Deno.test("klPenalizedRewards: -coef * kl on action tokens, the reward on the last one", () => {
  // coef 0.5, kl [0.1, 0.2, 0.3], mask [1, 1, 0]: [-0.05, -0.1 + 1, 0].
  const rewards = klPenalizedRewards(1, [1, 1, 0], [0.1, 0.2, 0.3], 0.5);
  assertClose(rewards, [-0.05, 0.9, 0], { ...TOL, label: "penalised" });
  // As token rewards of reinforceplusplus (gamma 1): G = [0.85, 0.9, 0], then whitened.
  const result = compute("reinforceplusplus", [
    { groupId: 0, reward: 1, actionMask: [1, 1, 0], tokenRewards: rewards },
    { groupId: 0, reward: 0, actionMask: [1] },
  ], {});
  const w = whitener([0.85, 0.9, 0]);
  assertClose(result.perToken[0], [w(0.85), w(0.9), 0], { ...TOL, label: "A with KL" });
  assertThrows(
    () => klPenalizedRewards(1, [1], [0, 0], 1),
    Error,
    "kl has 2 tokens, the action mask 1",
  );
});

/**
 * The advantage fns of Trinity's registry beyond GRPO's family (asymre, rec, step_wise_grpo,
 * on_policy_distill, jsd, clipb, clipv) and GRPO's Trinity keys (std_cal_level, rank_penalty,
 * duplicate_experiences), on small steps against values worked out by hand in the comments.
 */

import type { AdvantageSample } from "../../src/algorithm/advantage/mod.ts";
import { ADVANTAGE_FN } from "../../src/algorithm/advantage/mod.ts";
import { jsdPerToken } from "../../src/algorithm/advantage/distill.ts";
import { configure } from "../../src/util/registry.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";

const EXACT = { atol: 1e-9, rtol: 1e-9 };

function compute(name: string, samples: AdvantageSample[], args: Record<string, unknown> = {}) {
  const { entry, args: resolved } = configure(ADVANTAGE_FN, name, args);
  return entry.compute(samples, resolved);
}

const sample = (groupId: string, reward: number, extra: Partial<AdvantageSample> = {}) => ({
  groupId,
  reward,
  actionMask: [1, 1],
  ...extra,
});

Deno.test("asymre: reward minus (group mean + shift); a group of one keeps its reward", () => {
  const step = [sample("a", 1), sample("a", 0), sample("a", 0), sample("b", 2)];
  // Group a: mean 1/3, baseline 1/3 - 0.1.
  const b = 1 / 3 - 0.1;
  const result = compute("asymre", step);
  assertClose(result.perSequence!, [1 - b, -b, -b, 2], EXACT);
  assertEquals(result.skipped, [false, false, false, false]);
  assertClose(Array.from(result.perToken[0]), [1 - b, 1 - b], { atol: 1e-6, rtol: 1e-6 });
  assertEquals(ADVANTAGE_FN.get("asymre_verl").computeInTrainer, true);
});

Deno.test("rec: centred rewards, std-normalised or not; balance drops extra negatives", () => {
  const step = [sample("a", 1), sample("a", 0), sample("a", 0), sample("a", 0)];
  // mean 0.25; population std sqrt(3/16).
  assertClose(compute("rec", step).perSequence!, [0.75, -0.25, -0.25, -0.25], EXACT);
  const std = Math.sqrt(3 / 16);
  assertClose(
    compute("rec", step, { std_normalize: true }).perSequence!,
    [0.75, -0.25, -0.25, -0.25].map((x) => x / (std + 1e-6)),
    EXACT,
  );
  // balance: 3 below the mean, 1 above -> 2 dropped (advantage 0); the kept 1 and 0 have
  // mean 0.5: advantages 0.5 and -0.5.
  const balanced = compute("rec", step, { drop: "balance" }).perSequence!;
  assertEquals(balanced[0], 0.5);
  assertEquals(balanced.slice(1).sort(), [-0.5, 0, 0]);
  assertEquals(compute("rec", step, { drop: "balance" }).perSequence, balanced, "seeded");
  assertThrows(() => compute("rec", step, { drop: "all" }), Error, "drop");
});

Deno.test("step_wise_grpo: the last step's reward normalised per task, broadcast over the run", () => {
  // Task a: run 0 has 2 steps (last reward 1), run 1 one step (reward 0). Task b: one run.
  const step = [
    sample("a", 0, { runId: 0 }),
    sample("a", 1, { runId: 0 }),
    sample("a", 0, { runId: 1 }),
    sample("b", 3, { runId: 0 }),
  ];
  const s = Math.SQRT1_2; // std of [1, 0]
  const plain = compute("step_wise_grpo", step);
  // Task b alone: mean 0, std 1 -> 3 / (1 + eps).
  assertClose(plain.perSequence!, [
    0.5 / (s + 1e-6),
    0.5 / (s + 1e-6),
    -0.5 / (s + 1e-6),
    3 / (1 + 1e-6),
  ], EXACT);
  const normed = compute("step_wise_grpo", step, { enable_step_norm: true });
  assertClose(normed.perSequence!.slice(0, 2), [0.25 / (s + 1e-6), 0.25 / (s + 1e-6)], EXACT);
  // Batch std over every run's last reward [1, 0, 3].
  const batchStd = Math.sqrt(((1 - 4 / 3) ** 2 + (4 / 3) ** 2 + (3 - 4 / 3) ** 2) / 2);
  const batch = compute("step_wise_grpo", step, { std_cal_level: "batch" });
  assertClose([batch.perSequence![2]], [-0.5 / (batchStd + 1e-6)], EXACT);
  // A threshold skips task b (one run).
  const skipping = compute("step_wise_grpo", step, { std_threshold: 0.0001 });
  assertEquals(skipping.skipped, [false, false, false, true]);
  assertEquals(skipping.metrics.skipped_group_ratio, 0.5);
});

Deno.test("grpo: Trinity's std_cal_level, rank_penalty and duplicate_experiences", () => {
  const step = [sample("a", 1), sample("a", 0), sample("b", 1), sample("b", 1)];
  // The batch's std of [1, 0, 1, 1]: sqrt((3 / 16 + 9 / 16) / 3).
  const batch = compute("grpo", step, { std_cal_level: "batch" });
  assertClose([batch.perSequence![0]], [0.5 / (Math.sqrt((3 / 16 + 9 / 16) / 3) + 1e-6)], EXACT);
  // rank_penalty 0.5: sample 1 has the lower mean log-prob (rank 0), sample 0 rank 1/2:
  // rewards 1 * (1 - 0.25) and 0 -> mean 0.375, std of [0.75, 0].
  const ranked = compute("grpo", [
    sample("a", 1, { logprobs: [-0.1, -0.1] }),
    sample("a", 0, { logprobs: [-2, -2] }),
  ], { rank_penalty: 0.5 });
  const s = Math.sqrt(0.75 ** 2 / 2);
  assertClose(ranked.perSequence!, [0.375 / (s + 1e-6), -0.375 / (s + 1e-6)], EXACT);
  // Group b (equal rewards) is skipped with a threshold; duplicates copy group a in its place.
  const dup = compute("grpo", step, { std_threshold: 0, duplicate_experiences: true });
  assertEquals(dup.skipped, [false, false, true, true]);
  assertEquals(dup.duplicates, [0, 1]);
});

Deno.test("on_policy_distill and jsd: per-token teacher-student advantages", () => {
  const step = [{
    groupId: "a",
    reward: 0,
    actionMask: [0, 1, 1],
    logprobs: [0, -1, -2],
    teacherLogprobs: [0, -0.5, -3],
  }];
  const opd = compute("on_policy_distill", step, { kl_coef: 2 });
  assertClose(Array.from(opd.perToken[0]), [0, 1, -2], EXACT);
  assertEquals(opd.perSequence, null);
  // JSD at beta 0.5 against a direct formula; beta 0 and 1 are the two KLs.
  const m = Math.log(0.5 * Math.exp(-0.5) + 0.5 * Math.exp(-1));
  assertClose([jsdPerToken(-1, -0.5, 0.5)], [0.5 * (-0.5 - m) + 0.5 * (-1 - m)], EXACT);
  assertEquals([jsdPerToken(-1, -0.5, 0), jsdPerToken(-1, -0.5, 1)], [-0.5, 0.5]);
  const jsd = compute("jsd", step, { temperature: 2 });
  assertClose([jsd.perToken[0][1]], [-jsdPerToken(-0.5, -0.25, 0.5)], EXACT);
  assertThrows(
    () => compute("jsd", [{ groupId: "a", reward: 0, actionMask: [1] }]),
    Error,
    "no teacher log-probs",
  );
});

Deno.test("clipb and clipv: negative-advantage tokens with an outlying entropy signal leave the mask", () => {
  // Group a: rewards 1, 0 -> advantages +0.707.., -0.707.. per token. 4 tokens per sample.
  const lp = Math.log(0.5);
  const current = (entropy: number[], nec?: number[]) => ({
    logprobs: [lp, lp, lp, lp],
    entropy,
    nec,
  });
  const step = [
    { ...sample("a", 1), actionMask: [1, 1, 1, 1], current: current([1, 1, 1, 1], [0, 0, 0, 0]) },
    {
      ...sample("a", 0),
      actionMask: [1, 1, 1, 1],
      // One token with a far lower S = 0.5 (H + lp): H = -20.
      current: current([1, 1, 1, -20], [0, 0, 0, -50]),
    },
  ];
  const b = compute("clipb", step, { mu: 2 });
  assertEquals(Array.from(b.actionMasks![1]), [1, 1, 1, 0]);
  assertEquals(Array.from(b.actionMasks![0]), [1, 1, 1, 1]);
  assertClose([b.metrics.frac_clipped_neg], [0.25], EXACT);
  // Clip_V: D = nec - S; a negative-advantage token whose D lies far above the others goes.
  step[1].current = current([1, 1, 1, 1], [0, 0, 0, 50]);
  const v = compute("clipv", step, { mu: 2, max_frac: 0.5 });
  assertEquals(Array.from(v.actionMasks![1]), [1, 1, 1, 0]);
  assertThrows(() => compute("clipb", [sample("a", 1)]), Error, "no entropy");
});

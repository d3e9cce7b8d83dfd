/**
 * REC advantages (Trinity's `rec` advantage fn, paired with the `rec` loss): each reward minus
 * its group's mean, divided by the group's population std (+ `epsilon`) when `std_normalize`.
 * `drop: "balance"` zeroes randomly chosen below-mean samples of a group until there are no
 * more of them than above-mean ones (the kept samples' mean and std are then used; a dropped
 * sample stays in the batch with advantage 0, as in Trinity). A group of one keeps its reward.
 * The drop is seeded by the group id, so a step is reproducible.
 */

import { type Args, checkChoice } from "../../util/registry.ts";
import { mulberry32 } from "../../util/random.ts";
import type { AdvantageFn, AdvantageSample } from "./advantage_fn.ts";
import { broadcastScores, groupIndices, mean } from "./advantage_fn.ts";

/** Population (n) standard deviation. */
function populationStd(xs: readonly number[]): number {
  const m = mean(xs);
  return Math.sqrt(mean(xs.map((x) => (x - m) ** 2)));
}

/** A seed from a group id (FNV-1a of its text). */
function seedOf(id: string | number): number {
  let h = 2166136261;
  for (const c of String(id)) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
  return h >>> 0;
}

/** Indices (into `rewards`) that `balance` drops: random below-mean ones beyond the rest. */
function balanceDrops(rewards: readonly number[], groupId: string | number): Set<number> {
  const m = mean(rewards);
  const negatives = rewards.flatMap((r, k) => (r >= m ? [] : [k]));
  const extra = negatives.length - (rewards.length - negatives.length);
  const random = mulberry32(seedOf(groupId));
  for (let k = negatives.length - 1; k > 0; k--) {
    const j = Math.floor(random() * (k + 1));
    [negatives[k], negatives[j]] = [negatives[j], negatives[k]];
  }
  return new Set(extra > 0 ? negatives.slice(0, extra) : []);
}

function recScores(samples: readonly AdvantageSample[], args: Args) {
  const drop = checkChoice('advantage fn "rec"', "drop", args.drop, ["none", "balance"]);
  const scores: (number | null)[] = samples.map(() => null);
  let dropped = 0;
  for (const [groupId, members] of groupIndices(samples)) {
    const rewards = members.map((i) => samples[i].reward as number);
    const drops = drop === "balance" && members.length > 1
      ? balanceDrops(rewards, groupId)
      : new Set<number>();
    dropped += drops.size;
    const kept = rewards.filter((_, k) => !drops.has(k));
    const [m, s] = kept.length <= 1 ? [0, 1] : [mean(kept), populationStd(kept)];
    members.forEach((i, k) => {
      const centred = rewards[k] - m;
      scores[i] = drops.has(k)
        ? 0
        : args.std_normalize
        ? centred / (s + (args.epsilon as number))
        : centred;
    });
  }
  const counted = samples.flatMap((s) => s.reward === null ? [] : [s.reward]);
  return broadcastScores(samples, scores, {
    reward_mean: mean(counted),
    drop_balance: counted.length ? dropped / counted.length : 0,
  });
}

/** REC's group advantage, computed in the experience pipeline. */
export const recAdvantage: AdvantageFn = {
  defaultArgs: { epsilon: 1e-6, std_normalize: false, drop: "none" },
  computeInTrainer: false,
  compute: recScores,
};

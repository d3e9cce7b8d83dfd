/**
 * OPMD advantages (online policy mirror descent, Trinity-RFT report, arXiv:2505.17826): each
 * reward minus a group baseline, the mean (`opmd_baseline: "mean"`) or
 * `tau * log(mean(exp(r / tau)))` (`"logavgexp"`, the baseline of the KL-regularised optimum).
 * Differs from Trinity: a group of one gets 0 and is skipped (Trinity's baseline is 0 there).
 * `opmd_verl` is the same fn computed by the trainer.
 */

import { type Args, checkChoice } from "../../util/registry.ts";
import {
  type AdvantageFn,
  type AdvantageSample,
  broadcastScores,
  groupIndices,
  mean,
} from "./advantage_fn.ts";

/** Arguments of the OPMD advantage fn. */
export type OpmdArgs = {
  /** `mean` or `logavgexp`. */
  opmd_baseline: string;
  /** Temperature of the `logavgexp` baseline (> 0). */
  tau: number;
};

/** `tau * log(mean(exp(r / tau)))`, computed stably around the maximum. */
function logAvgExp(rewards: readonly number[], tau: number): number {
  const top = Math.max(...rewards) / tau;
  const sum = rewards.reduce((a, r) => a + Math.exp(r / tau - top), 0);
  return tau * (top + Math.log(sum / rewards.length));
}

function opmdScores(samples: readonly AdvantageSample[], args: OpmdArgs) {
  const component = 'advantage fn "opmd"';
  const kind = checkChoice(component, "opmd_baseline", args.opmd_baseline, ["mean", "logavgexp"]);
  if (!(args.tau > 0)) {
    throw new Error(`Cannot configure ${component}: key "tau" expected > 0, received ${args.tau}`);
  }
  const scores: (number | null)[] = samples.map(() => null);
  const baselines: number[] = [];
  for (const members of groupIndices(samples).values()) {
    if (members.length < 2) continue;
    const rewards = members.map((i) => samples[i].reward as number);
    const b = kind === "mean" ? mean(rewards) : logAvgExp(rewards, args.tau);
    baselines.push(b);
    members.forEach((i, k) => scores[i] = rewards[k] - b);
  }
  return broadcastScores(samples, scores, { group_baseline: mean(baselines) });
}

/** OPMD's group-baseline advantage, computed in the experience pipeline. */
export const opmdAdvantage: AdvantageFn = {
  defaultArgs: { opmd_baseline: "mean", tau: 1.0 },
  computeInTrainer: false,
  compute: (samples, args: Args) => opmdScores(samples, args as OpmdArgs),
};

/** `opmd` computed by the trainer (Trinity's `opmd_verl`). */
export const opmdVerlAdvantage: AdvantageFn = { ...opmdAdvantage, computeInTrainer: true };

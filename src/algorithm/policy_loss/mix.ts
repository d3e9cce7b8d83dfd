/**
 * Trinity's MIX loss (CHORD-style mixing of RL and SFT): `(1 - mu) * ppo(rollout rows) +
 * mu * sft(expert rows)`, the rows told apart by `isExpert`. Differs from Trinity: each part is
 * aggregated over its own rows' tokens with the part's mode (ppo's `loss_agg_mode`, token-mean
 * for sft) instead of Trinity's per-micro-batch weights; in a seq-mean mode the other part's rows
 * count as empty sequences.
 */

import { add, mul } from "../../ops/binary.ts";
import { affine, scale } from "../../ops/unary.ts";
import type { Args } from "../../util/registry.ts";
import { input, type PolicyLossFn, type PolicyLossInputs } from "./policy_loss_fn.ts";
import { ppoPolicyLoss } from "./ppo.ts";
import { sftPolicyLoss } from "./sft.ts";

function mixLoss(inputs: PolicyLossInputs, args: Args) {
  const isExpert = input("mix", inputs, "isExpert"); // [B, 1]
  const mu = args.mu as number;
  const rl = ppoPolicyLoss.build(
    { ...inputs, mask: mul(inputs.mask, affine(isExpert, -1, 1)) },
    args,
  );
  const sft = sftPolicyLoss.build(
    { ...inputs, mask: mul(inputs.mask, isExpert) },
    sftPolicyLoss.defaultArgs,
  );
  const loss = add(scale(rl.loss, 1 - mu), scale(sft.loss, mu));
  const metrics = { loss, ...prefixed("usual", rl.metrics), ...prefixed("expert", sft.metrics) };
  return { loss, metrics };
}

function prefixed<T>(prefix: string, metrics: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(metrics).map(([k, v]) => [`${prefix}/${k}`, v]));
}

/** MIX: PPO on rollouts plus SFT on expert data, weighted by `mu`. */
export const mixPolicyLoss: PolicyLossFn = {
  defaultArgs: { ...ppoPolicyLoss.defaultArgs, mu: 0.1 },
  needs: ["oldLogp", "advantages", "isExpert"],
  build: mixLoss,
};

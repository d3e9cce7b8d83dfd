/**
 * Trinity's MIX loss (CHORD-style mixing of RL and SFT): `(1 - mu) * ppo(rollout rows) +
 * mu * sft(expert rows)`, the rows told apart by `isExpert`; and the mixing that `mix_chord`
 * shares. The PPO part aggregates by `grpo_loss_agg_mode`, the SFT part by `sft_loss_agg_mode`
 * (each `loss_agg_mode` when empty). Differs from Trinity: each part is aggregated over its own
 * rows' tokens instead of being re-weighted per micro-batch by the batch-size keys
 * (`ppo_mini_batch_size`, `train_batch_size_usual`, ...; accepted and not read); in a seq-mean
 * mode the other part's rows count as empty sequences. Cut into micro-batches, each weighs by
 * its share of the rows (as Trinity's per-micro-batch weights do).
 */

import type { Tensor } from "../../graph/tensor.ts";
import { add, mul, sub } from "../../ops/binary.ts";
import { affine, scale } from "../../ops/unary.ts";
import type { LossTerm } from "../loss_agg.ts";
import type { Args } from "../../util/registry.ts";
import { input, type PolicyLossFn, type PolicyLossInputs } from "./policy_loss_fn.ts";
import { ppoPolicyLoss } from "./ppo.ts";
import { sftPolicyLoss } from "./sft.ts";

/** Trinity's per-micro-batch weighting keys of the mixed losses (accepted, not read). */
export const MIX_BATCH_KEYS = {
  use_dynamic_bsz: false,
  ppo_mini_batch_size: 1,
  ppo_micro_batch_size_per_gpu: 1,
  ngpus_trainer: 1,
  train_batch_size_usual: 1,
  train_batch_size_expert: 1,
} as const;

/** How the mixed losses are cut and weighed in micro-batches: by whole rows. */
export const MIX_MICRO_BATCHING: Pick<PolicyLossFn, "microBatching" | "lossAggMode"> = {
  microBatching: "rows",
  lossAggMode: () => "seq-mean-token-mean",
};

/** `loss_agg_mode` of each part: empty means the loss's own `loss_agg_mode`. */
export const MIX_PART_MODES = { sft_loss_agg_mode: "", grpo_loss_agg_mode: "" } as const;

/**
 * `(1 - mu) * ppo(rollouts) + mu * sft(expert rows)` for `fn`; `mu` a number or a scalar
 * tensor, `sft` the expert part's loss (with its args). Metrics `usual/...`, `expert/...`.
 */
export function mixedLoss(
  fn: string,
  inputs: PolicyLossInputs,
  args: Args,
  mu: number | Tensor,
  sft: { loss: PolicyLossFn; args: Args },
): LossTerm {
  const isExpert = input(fn, inputs, "isExpert"); // [B, 1]
  const own = args.loss_agg_mode;
  const rlArgs = { ...args, loss_agg_mode: (args.grpo_loss_agg_mode || own) as string };
  const rl = ppoPolicyLoss.build(
    { ...inputs, mask: mul(inputs.mask, affine(isExpert, -1, 1)) },
    rlArgs,
  );
  const expert = sft.loss.build({ ...inputs, mask: mul(inputs.mask, isExpert) }, {
    ...sft.args,
    loss_agg_mode: (args.sft_loss_agg_mode || own) as string,
  });
  const loss = typeof mu === "number"
    ? add(scale(rl.loss, 1 - mu), scale(expert.loss, mu))
    : add(rl.loss, mul(mu, sub(expert.loss, rl.loss)));
  return {
    loss,
    metrics: { loss, ...prefixed("usual", rl.metrics), ...prefixed("expert", expert.metrics) },
  };
}

function prefixed<T>(prefix: string, metrics: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(metrics).map(([k, v]) => [`${prefix}/${k}`, v]));
}

/** MIX: PPO on rollouts plus SFT on expert data, weighted by `mu`. */
export const mixPolicyLoss: PolicyLossFn = {
  defaultArgs: { ...ppoPolicyLoss.defaultArgs, mu: 0.1, ...MIX_PART_MODES, ...MIX_BATCH_KEYS },
  needs: ["oldLogp", "advantages", "isExpert"],
  ...MIX_MICRO_BATCHING,
  build: (inputs, args) =>
    mixedLoss("mix", inputs, args, args.mu as number, {
      loss: sftPolicyLoss,
      args: sftPolicyLoss.defaultArgs,
    }),
};

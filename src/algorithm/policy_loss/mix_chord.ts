/**
 * CHORD's policy loss (Zhang et al. 2025, arXiv:2508.11408; Trinity's `mix_chord`): MIX's
 * `(1 - mu) * ppo(rollouts) + mu * sft(expert rows)` with `mu` on a schedule over train steps
 * (linear warm-up to `mu_peak` over `mu_warmup_steps`, cosine decay to `mu_valley` over
 * `mu_decay_steps`, then `mu_valley`) and the expert part weighted per token by `sft_phi`
 * (`enable_phi_function`, CHORD-phi) or plain SFT (CHORD-mu). Differs from Trinity as `mix`
 * does (see `mix.ts`).
 */

import { scale } from "../../ops/unary.ts";
import type { Args } from "../../util/registry.ts";
import { MIX_BATCH_KEYS, MIX_MICRO_BATCHING, MIX_PART_MODES, mixedLoss } from "./mix.ts";
import type { PolicyLossFn } from "./policy_loss_fn.ts";
import { ppoPolicyLoss } from "./ppo.ts";
import { sftPolicyLoss } from "./sft.ts";
import { sftPhiPolicyLoss } from "./sft_weighted.ts";

/** CHORD's mu at train step `step` (Trinity's `mu_schedule_function`). */
export function chordMu(args: Args, step: number): number {
  const [warmup, decay, peak, valley] = [
    args.mu_warmup_steps,
    args.mu_decay_steps,
    args.mu_peak,
    args.mu_valley,
  ] as number[];
  if (step < warmup) return (step / warmup) * peak;
  if (step >= warmup + decay) return valley;
  const cosine = 0.5 * (1 + Math.cos((Math.PI * (step - warmup)) / decay));
  return (peak - valley) * cosine + valley;
}

/** CHORD: MIX with a scheduled mu and phi-weighted SFT. */
export const mixChordPolicyLoss: PolicyLossFn = {
  defaultArgs: {
    mu_warmup_steps: 0,
    mu_decay_steps: 0,
    mu_peak: 0.1,
    mu_valley: 0.1,
    enable_phi_function: true,
    ...ppoPolicyLoss.defaultArgs,
    ...MIX_PART_MODES,
    ...MIX_BATCH_KEYS,
  },
  needs: ["oldLogp", "advantages", "isExpert"],
  ...MIX_MICRO_BATCHING,
  stepScalars: (args, step) => ({ mu: chordMu(args, step) }),
  build(inputs, args) {
    const mu = inputs.scalars?.mu;
    if (!mu) throw new Error('Cannot build policy loss fn "mix_chord": input scalar "mu" missing');
    const sft = args.enable_phi_function ? sftPhiPolicyLoss : sftPolicyLoss;
    const loss = mixedLoss("mix_chord", inputs, args, mu, { loss: sft, args: sft.defaultArgs });
    // A computed copy: the input itself is not an output of the graph.
    return { loss: loss.loss, metrics: { ...loss.metrics, mu: scale(mu, 1) } };
  },
};

/**
 * The policy loss registry (Trinity's `POLICY_LOSS_FN`) with the built-in losses registered
 * explicitly here; plugins add theirs with `POLICY_LOSS_FN.register(name, fn)`.
 */

import { Registry } from "../../util/registry.ts";
import { cispoPolicyLoss } from "./cispo.ts";
import { dpoPolicyLoss } from "./dpo.ts";
import { gspoPolicyLoss } from "./gspo.ts";
import { importanceSamplingPolicyLoss } from "./importance_sampling.ts";
import { mixPolicyLoss } from "./mix.ts";
import { m2poPolicyLoss } from "./m2po.ts";
import { mixChordPolicyLoss } from "./mix_chord.ts";
import { opmdPolicyLoss } from "./opmd.ts";
import type { PolicyLossFn } from "./policy_loss_fn.ts";
import { ppoPolicyLoss } from "./ppo.ts";
import { recPolicyLoss } from "./rec.ts";
import { sapoPolicyLoss } from "./sapo.ts";
import { sftPolicyLoss } from "./sft.ts";
import { sftIsPolicyLoss, sftPhiPolicyLoss } from "./sft_weighted.ts";
import { sppoPolicyLoss } from "./sppo.ts";
import { toprPolicyLoss } from "./topr.ts";

export type {
  MiniBatchRow,
  PolicyLossFn,
  PolicyLossInputName,
  PolicyLossInputs,
} from "./policy_loss_fn.ts";

/**
 * Policy losses by name (Trinity's registry): `cispo`, `dpo`, `gspo`, `importance_sampling`,
 * `m2po`, `mix`, `mix_chord`, `opmd`, `ppo`, `rec`, `sapo`, `sft`, `sft_is`, `sft_phi`, `sppo`, `topr`.
 */
export const POLICY_LOSS_FN: Registry<PolicyLossFn> = new Registry<PolicyLossFn>(
  "policy loss fn",
  [
    ["ppo", ppoPolicyLoss],
    ["gspo", gspoPolicyLoss],
    ["cispo", cispoPolicyLoss],
    ["sapo", sapoPolicyLoss],
    ["opmd", opmdPolicyLoss],
    ["sft", sftPolicyLoss],
    ["dpo", dpoPolicyLoss],
    ["mix", mixPolicyLoss],
    ["mix_chord", mixChordPolicyLoss],
    ["topr", toprPolicyLoss],
    ["sppo", sppoPolicyLoss],
    ["rec", recPolicyLoss],
    ["importance_sampling", importanceSamplingPolicyLoss],
    ["sft_is", sftIsPolicyLoss],
    ["sft_phi", sftPhiPolicyLoss],
    ["m2po", m2poPolicyLoss],
  ],
);

/**
 * The policy loss registry (Trinity's `POLICY_LOSS_FN`) with the built-in losses registered
 * explicitly here; plugins add theirs with `POLICY_LOSS_FN.register(name, fn)`.
 */

import { Registry } from "../registry.ts";
import { cispoPolicyLoss } from "./cispo.ts";
import { dpoPolicyLoss } from "./dpo.ts";
import { gspoPolicyLoss } from "./gspo.ts";
import { mixPolicyLoss } from "./mix.ts";
import { opmdPolicyLoss } from "./opmd.ts";
import type { PolicyLossFn } from "./policy_loss_fn.ts";
import { ppoPolicyLoss } from "./ppo.ts";
import { sapoPolicyLoss } from "./sapo.ts";
import { sftPolicyLoss } from "./sft.ts";

export type { PolicyLossFn, PolicyLossInputName, PolicyLossInputs } from "./policy_loss_fn.ts";

/** Policy losses by name: `cispo`, `dpo`, `gspo`, `mix`, `opmd`, `ppo`, `sapo`, `sft`. */
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
  ],
);

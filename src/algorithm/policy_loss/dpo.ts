/**
 * DPO's loss (Rafailov et al. 2023, arXiv:2305.18290) with label smoothing (cDPO), as Trinity:
 * rows come in pairs, chosen at even rows and rejected at odd rows; each row's log-ratio is the
 * masked sum of `logp - refLogp`, and the pair's loss is
 * `(1 - ls) * -log sigmoid(beta * d) + ls * -log sigmoid(-beta * d)`, d = chosen - rejected,
 * averaged over pairs. Only the sigmoid loss (no IPO or hinge variants, as in Trinity).
 */

import { add, mul, sub } from "../../ops/binary.ts";
import { sumLast } from "../../ops/reduce.ts";
import { reshape } from "../../ops/reshape.ts";
import { sliceLast } from "../../ops/slice.ts";
import { scale } from "../../ops/unary.ts";
import { negLogSigmoid, step } from "../_piecewise.ts";
import { meanAll } from "../loss_agg.ts";
import type { Args } from "../../util/registry.ts";
import { input, type PolicyLossFn, type PolicyLossInputs } from "./policy_loss_fn.ts";

function dpoLoss(inputs: PolicyLossInputs, args: Args) {
  const refLogp = input("dpo", inputs, "refLogp");
  const { logp, mask } = inputs;
  const rows = logp.shape[0];
  if (rows % 2 !== 0) {
    throw new Error(
      `Cannot build policy loss fn "dpo": expected an even number of rows (chosen, rejected pairs), received ${rows}`,
    );
  }
  const beta = args.beta as number;
  const smoothing = args.label_smoothing as number;
  const pairs = reshape(sumLast(mul(sub(logp, refLogp), mask)), [rows / 2, 2]);
  const chosen = sliceLast(pairs, 0, 1);
  const rejected = sliceLast(pairs, 1, 1);
  const margin = scale(sub(chosen, rejected), beta);
  let losses = scale(negLogSigmoid(margin), 1 - smoothing);
  if (smoothing !== 0) losses = add(losses, scale(negLogSigmoid(scale(margin, -1)), smoothing));
  const loss = meanAll(losses);
  return {
    loss,
    metrics: {
      dpo_loss: loss,
      chosen_reward: scale(meanAll(chosen), beta),
      rejected_reward: scale(meanAll(rejected), beta),
      accuracy_mean: meanAll(step(margin)),
    },
  };
}

/** DPO's sigmoid preference loss. */
export const dpoPolicyLoss: PolicyLossFn = {
  defaultArgs: { beta: 0.1, label_smoothing: 0.0 },
  needs: ["refLogp"],
  microBatching: "pairs",
  build: dpoLoss,
};

/**
 * Entropy loss fns (Trinity's `ENTROPY_LOSS_FN`): the entropy bonus as a graph loss term,
 * `-entropy_coef * aggregate(H)` with `H` the policy's softmax entropy per token (computed with the
 * log-probs, `model/token_scores.ts`, so the logits are never whole), so that adding it to
 * the policy loss and minimising raises the entropy (verl's `pg_loss - entropy_coeff * entropy`).
 * `mix` counts rollout rows only (Trinity's MIX); `none` builds nothing, not even the entropy.
 */

import { formatShape, sameShape, type Tensor } from "../graph/tensor.ts";
import { mul } from "../ops/binary.ts";
import { reshape } from "../ops/reshape.ts";
import { affine, scale } from "../ops/unary.ts";
import { aggregateByArgs, LOSS_AGG_DEFAULTS, type LossTerm } from "./loss_agg.ts";
import { type Args, Registry } from "../util/registry.ts";

/** What an entropy loss reads. */
export interface EntropyInputs {
  /** The policy's softmax entropy at the sampled positions [B, T] (temperature applied). */
  entropy: Tensor;
  /** 1 on the tokens the loss covers [B, T], f32. */
  mask: Tensor;
  /** 1 for expert (SFT) rows [B] (`mix` only). */
  isExpert?: Tensor;
}

/** An entropy loss fn. */
export interface EntropyLossFn {
  /** Every argument it takes, with its default. */
  readonly defaultArgs: Args;
  /** The loss term (metric `entropy`: the aggregate before the coefficient), or null. */
  build(inputs: EntropyInputs, args: Args): LossTerm | null;
}

/** The entropy term over the tokens of `mask`; `name` names the fn in errors. */
function entropyTerm(name: string, perToken: Tensor, mask: Tensor, args: Args): LossTerm {
  if (perToken.rank !== 2 || !sameShape(perToken.shape, mask.shape)) {
    throw new Error(
      `Cannot build entropy loss fn "${name}": expected entropies [B, T] and a mask of that shape, received ${perToken} and ${mask}`,
    );
  }
  const entropy = aggregateByArgs(`entropy loss fn "${name}"`, args, perToken, mask);
  return { loss: scale(entropy, -(args.entropy_coef as number)), metrics: { entropy } };
}

const DEFAULT_ARGS = { entropy_coef: 0.0, ...LOSS_AGG_DEFAULTS };

/** The built-in entropy loss fns: `default`, `mix`, `none`. */
export const ENTROPY_LOSS_FN: Registry<EntropyLossFn> = new Registry<EntropyLossFn>(
  "entropy loss fn",
  [
    ["default", {
      defaultArgs: DEFAULT_ARGS,
      build: ({ entropy, mask }, args) => entropyTerm("default", entropy, mask, args),
    }],
    ["mix", {
      defaultArgs: DEFAULT_ARGS,
      build({ entropy, mask, isExpert }, args) {
        if (!isExpert || !sameShape(isExpert.shape, [mask.shape[0]])) {
          throw new Error(
            `Cannot build entropy loss fn "mix": input "isExpert" expected shape ${
              formatShape([mask.shape[0]])
            }, received ${isExpert ?? "none"}`,
          );
        }
        const rollouts = affine(reshape(isExpert, [mask.shape[0], 1]), -1, 1);
        return entropyTerm("mix", entropy, mul(mask, rollouts), args);
      },
    }],
    ["none", { defaultArgs: {}, build: () => null }],
  ],
);

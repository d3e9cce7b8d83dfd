/**
 * `mask_response_truncated` (Trinity's `MaskResponseTruncatedOperator`, DAPO's overlong
 * filtering, arXiv:2503.14476 section 3.4): an experience whose response was cut at the length
 * limit (`truncated`) keeps its place and reward but gets an all-zero action mask, so it adds no
 * gradient. Keeps every experience; drops nothing.
 */

import type { Experience } from "../experience.ts";
import type { OperatorFactory } from "./operator.ts";

/**
 * `exp` with an all-zero action mask, and the per-token values that are 0 outside the mask
 * (log-probs, advantages, returns) zeroed with it.
 */
export function withoutActions(exp: Experience): Experience {
  const zeros = () => exp.tokens.map(() => 0);
  return {
    ...exp,
    actionMask: zeros(),
    logprobs: zeros(),
    ...(exp.advantages ? { advantages: zeros() } : {}),
    ...(exp.returns ? { returns: zeros() } : {}),
  };
}

/** Masks truncated responses out of the loss; metric `masked_truncated_count`. */
export const maskResponseTruncated: OperatorFactory = {
  defaultArgs: {},
  create(name) {
    return {
      name,
      process(exps) {
        const experiences = exps.map((exp) => exp.truncated ? withoutActions(exp) : exp);
        const masked = exps.filter((exp) => exp.truncated).length;
        return { experiences, metrics: { masked_truncated_count: masked } };
      },
    };
  },
};

/**
 * `mask_response_truncated` (Trinity's `MaskResponseTruncatedOperator`, DAPO's overlong
 * filtering, arXiv:2503.14476 section 3.4): an experience whose response was cut at the length
 * limit (`truncated`) keeps its place and reward but gets an all-zero action mask, so it adds no
 * gradient. Keeps every experience; drops nothing.
 */

import type { Experience } from "../experience.ts";
import type { OperatorFactory } from "./operator.ts";

/** `exp` with an all-zero action mask (and log-probs, which are 0 where the mask is). */
export function withoutActions(exp: Experience): Experience {
  return {
    ...exp,
    actionMask: exp.actionMask.map(() => 0),
    logprobs: exp.logprobs.map(() => 0),
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

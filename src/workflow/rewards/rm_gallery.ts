/**
 * `rm_gallery_reward` (Trinity's `RMGalleryFn`): a reward model of the RM-Gallery library,
 * named by `reward_name`. RM-Gallery's rule-based `math_verify_reward` is rft's math verifier
 * (`math_answer.ts`: the response's final answer against the reference, as numbers or LaTeX
 * values; metric `math_verify`, 1 or 0, as RM-Gallery names it). Any other reward model needs
 * the RM-Gallery library (Python) and is refused before the run starts.
 */

import { taskAnswer } from "../../buffer/task.ts";
import { mathCorrect } from "./math.ts";
import type { RewardFnFactory } from "./reward_fn.ts";

/** The RM-Gallery reward models rft computes itself. */
const BUILT_IN = ["math_verify_reward"];

/** RM-Gallery's `math_verify_reward` on rft's verifier; other `reward_name`s refused. */
export const rmGalleryReward: RewardFnFactory = {
  description: "RM-Gallery reward model by reward_name (math_verify_reward built in)",
  defaultArgs: { reward_name: "math_verify_reward" },
  checkArgs(args) {
    if (!BUILT_IN.includes(args.reward_name as string)) {
      throw new Error(
        `reward_name ${
          JSON.stringify(args.reward_name)
        } needs the RM-Gallery library (Python), which rft does not run; built in: ${
          BUILT_IN.join(", ")
        }`,
      );
    }
  },
  compute({ response, task }) {
    const score = Number(mathCorrect(response, taskAnswer(task)));
    return { reward: score, metrics: { math_verify: score } };
  },
};

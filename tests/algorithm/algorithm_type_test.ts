/**
 * Algorithm types: every default names registered components whose arguments resolve, the flags
 * agree with the advantage fns, and the values Trinity documents (OPMD in its developer guide,
 * GRPO and PPO in its algorithm table) are kept.
 */

import { ADVANTAGE_FN } from "../../src/algorithm/advantage/mod.ts";
import { ALGORITHM_TYPE } from "../../src/algorithm/algorithm_type.ts";
import { ENTROPY_LOSS_FN } from "../../src/algorithm/entropy.ts";
import { KL_FN } from "../../src/algorithm/kl.ts";
import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";
import { configure } from "../../src/util/registry.ts";
import { assertEquals } from "../_asserts.ts";

Deno.test("algorithm types: defaults name registered components with valid args", () => {
  assertEquals(ALGORITHM_TYPE.names(), [
    "asymre",
    "cispo",
    "dapo",
    "dpo",
    "dr_grpo",
    "grpo",
    "grpo_verl",
    "gspo",
    "jsd",
    "m2po",
    "mix",
    "mix_chord",
    "multi_step_grpo",
    "on_policy_distill",
    "opmd",
    "ppo",
    "raft",
    "rec",
    "reinforceplusplus",
    "rloo",
    "sapo",
    "sft",
    "sppo",
    "topr",
  ]);
  for (const name of ALGORITHM_TYPE.names()) {
    const algorithm = ALGORITHM_TYPE.get(name);
    const c = algorithm.defaultConfig;
    configure(POLICY_LOSS_FN, c.policyLossFn, c.policyLossFnArgs);
    KL_FN.get(c.klPenaltyFn);
    KL_FN.get(c.klLossFn);
    ENTROPY_LOSS_FN.get(c.entropyLossFn);
    if (c.advantageFn === null) continue;
    const { entry } = configure(ADVANTAGE_FN, c.advantageFn, c.advantageFnArgs);
    assertEquals(entry.computeInTrainer, algorithm.computeAdvantageInTrainer, name);
    const needsReference = c.klLossFn !== "none" || c.klPenaltyFn !== "none";
    assertEquals(algorithm.useReference, needsReference, `${name} useReference`);
  }
});

Deno.test("algorithm types: Trinity's documented defaults", () => {
  const opmd = ALGORITHM_TYPE.get("opmd");
  assertEquals(
    [opmd.useCritic, opmd.useReference, opmd.computeAdvantageInTrainer, opmd.canBalanceBatch],
    [false, true, false, true],
  );
  assertEquals(opmd.defaultConfig, {
    repeatTimes: 2,
    sampleStrategy: "default",
    advantageFn: "opmd",
    policyLossFn: "opmd",
    klPenaltyFn: "none",
    klLossFn: "k2",
    entropyLossFn: "default",
  });
  const ppo = ALGORITHM_TYPE.get("ppo");
  assertEquals([ppo.useCritic, ppo.computeAdvantageInTrainer, ppo.defaultConfig.repeatTimes], [
    true,
    true,
    1,
  ]);
  assertEquals(ALGORITHM_TYPE.get("dpo").canBalanceBatch, false);
  assertEquals(ALGORITHM_TYPE.get("sft").defaultConfig.advantageFn, null);
});

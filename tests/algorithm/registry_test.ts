/**
 * Registries: explicit registration, duplicate names rejected, unknown names listing the known
 * ones with a did-you-mean, and `configure` resolving `*_args` over defaults (unknown keys and
 * wrong types rejected, naming the component, key, expected and received).
 */

import { ADVANTAGE_FN } from "../../src/algorithm/advantage/mod.ts";
import { ALGORITHM_TYPE } from "../../src/algorithm/algorithm_type.ts";
import { ENTROPY_LOSS_FN } from "../../src/algorithm/entropy.ts";
import { KL_FN } from "../../src/algorithm/kl.ts";
import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";
import { checkChoice, configure, knownNames, Registry } from "../../src/algorithm/registry.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";

Deno.test("Registry: register, get, names; duplicates and unknown names are errors", () => {
  const r = new Registry<{ defaultArgs: { k: number } }>("widget", [["beta", {
    defaultArgs: { k: 1 },
  }]]);
  r.register("alpha", { defaultArgs: { k: 2 } });
  assertEquals(r.names(), ["alpha", "beta"]);
  assertEquals(r.get("alpha").defaultArgs.k, 2);
  assertEquals(r.has("gamma"), false);
  assertThrows(
    () => r.register("beta", { defaultArgs: { k: 3 } }),
    Error,
    'Cannot register widget "beta": the name is taken',
  );
  assertThrows(() => r.get("gamma"), Error, 'Unknown widget "gamma"; known: alpha, beta');
  assertThrows(() => r.get("alpah"), Error, 'known: alpha, beta. Did you mean "alpha"?');
});

Deno.test("built-in registries list their names on an unknown one", () => {
  assertThrows(
    () => ADVANTAGE_FN.get("grpoo"),
    Error,
    'Unknown advantage fn "grpoo"; known: grpo, opmd, ppo, reinforce, reinforceplusplus, rloo. Did you mean "grpo"?',
  );
  assertThrows(
    () => POLICY_LOSS_FN.get("ppo2"),
    Error,
    'Unknown policy loss fn "ppo2"; known: cispo, dpo, gspo, mix, opmd, ppo, sapo, sft. Did you mean "ppo"?',
  );
  assertThrows(
    () => KL_FN.get("kl"),
    Error,
    // k1, k2 and k3 are all one edit away: no suggestion.
    'Unknown KL fn "kl"; known: abs, k1, k2, k3, low_var_kl, none',
  );
  assertThrows(() => ENTROPY_LOSS_FN.get("basic"), Error, "known: default, mix, none");
  assertThrows(
    () => ALGORITHM_TYPE.get("reinforce++"),
    Error,
    'Unknown algorithm "reinforce++"; known: cispo, dapo, dpo, dr_grpo, grpo, gspo, mix, opmd, ppo, reinforceplusplus, rloo, sapo, sft',
  );
  // One edit away is suggested for short names, none for a name that is merely similar.
  assertThrows(() => ALGORITHM_TYPE.get("sapoo"), Error, 'Did you mean "sapo"?');
  assertThrows(() => ALGORITHM_TYPE.get("grpoo"), Error, 'Did you mean "grpo"?');
  assertEquals(knownNames("ppox2", ["ppo", "sapo"]), "known: ppo, sapo");
  // A tie between two near names suggests neither rather than one at random.
  assertEquals(knownNames("xapo", ["sapo", "dapo"]), "known: sapo, dapo");
  assertEquals(knownNames("xapo", ["sapo", "grpo"]), 'known: sapo, grpo. Did you mean "sapo"?');
  // A unique name that the given one begins.
  assertEquals(
    knownNames("math_dapo", ["math", "math_dapo_reward"]).endsWith('"math_dapo_reward"?'),
    true,
  );
  assertEquals(knownNames("math_", ["math_a", "math_b"]), "known: math_a, math_b");
});

Deno.test("configure: given args override defaults key by key", () => {
  const { entry, args } = configure(POLICY_LOSS_FN, "ppo", { clip_range_high: 0.28 });
  assertEquals(entry, POLICY_LOSS_FN.get("ppo"));
  assertEquals(args, {
    clip_range: 0.2,
    clip_range_low: null,
    clip_range_high: 0.28,
    clip_ratio_c: 3,
    loss_agg_mode: "token-mean",
    loss_scale_factor: null,
  });
  // A null default takes a number or null.
  assertEquals(configure(ADVANTAGE_FN, "grpo", { std_threshold: null }).args.std_threshold, null);
});

Deno.test("configure: unknown keys and wrong types are errors naming component, key and values", () => {
  assertThrows(
    () => configure(POLICY_LOSS_FN, "ppo", { clip_rnage: 0.3 }),
    Error,
    'Cannot configure policy loss fn "ppo": unknown key "clip_rnage"; known: clip_range, clip_range_high, clip_range_low, clip_ratio_c, loss_agg_mode, loss_scale_factor. Did you mean "clip_range"?',
  );
  assertThrows(
    () => configure(ADVANTAGE_FN, "grpo", { epsilon: "small" }),
    Error,
    'Cannot configure advantage fn "grpo": key "epsilon" expected a number, received "small"',
  );
  assertThrows(
    () => configure(ADVANTAGE_FN, "grpo", { std_threshold: "0" }),
    Error,
    'key "std_threshold" expected a number or null, received "0"',
  );
  assertThrows(
    () => checkChoice('advantage fn "grpo"', "std_norm", "grp", ["group", "batch", "none"]),
    Error,
    'Cannot configure advantage fn "grpo": key "std_norm" expected one of group, batch, none, received "grp"',
  );
});

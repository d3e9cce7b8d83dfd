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
import {
  type Args,
  checkChoice,
  configure,
  knownNames,
  Registry,
} from "../../src/util/registry.ts";
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
    'Unknown advantage fn "grpoo"; known: asymre, asymre_verl, clipb, clipv, grpo, grpo_verl, jsd, on_policy_distill, opmd, opmd_verl, ppo, rec, reinforce, reinforceplusplus, rloo, step_wise_grpo. Did you mean "grpo"?',
  );
  assertThrows(
    () => POLICY_LOSS_FN.get("ppo2"),
    Error,
    'Unknown policy loss fn "ppo2"; known: cispo, dpo, gspo, importance_sampling, m2po, mix, mix_chord, opmd, ppo, rec, sapo, sft, sft_is, sft_phi, sppo, topr. Did you mean "ppo"?',
  );
  assertThrows(
    () => KL_FN.get("kl"),
    Error,
    // k1, k2 and k3 are all one edit away: no suggestion.
    'Unknown KL fn "kl"; known: abs, corrected_k3, k1, k2, k3, low_var_kl, none',
  );
  assertThrows(() => ENTROPY_LOSS_FN.get("basic"), Error, "known: default, mix, none");
  assertThrows(
    () => ALGORITHM_TYPE.get("reinforce++"),
    Error,
    'Unknown algorithm "reinforce++"; known: asymre, cispo, dapo, dpo, dr_grpo, grpo, grpo_verl, gspo, jsd, m2po, mix, mix_chord, multi_step_grpo, on_policy_distill, opmd, ppo, raft, rec, reinforceplusplus, rloo, sapo, sft, sppo, topr',
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
    enable_sequence_masking: false,
    delta_sequence_masking: 0.1,
    fallback_to_policy_gradient: false,
  });
  // A null default takes a number or null; null elsewhere is the default.
  assertEquals(configure(ADVANTAGE_FN, "grpo", { std_threshold: null }).args.std_threshold, null);
  assertEquals(configure(ADVANTAGE_FN, "grpo", { std_norm: null }).args.std_norm, "group");
  // Mappings are checked key by key against a mapping default, lists item by item.
  const nested = new Registry<{ defaultArgs: Args }>("widget", [["w", {
    defaultArgs: { weights: { a: 1, b: 0.5 }, keys: ["x"], any: [] },
  }]]);
  assertEquals(
    configure(nested, "w", { weights: { b: 2 }, keys: ["y", "z"], any: [1, "q"] }).args,
    {
      weights: { a: 1, b: 2 },
      keys: ["y", "z"],
      any: [1, "q"],
    },
  );
  assertThrows(
    () => configure(nested, "w", { weights: { c: 1 } }),
    Error,
    'Cannot configure widget "w": unknown key "weights.c"; known: a, b',
  );
  assertThrows(
    () => configure(nested, "w", { weights: 3 }),
    Error,
    'key "weights" expected a mapping, received 3',
  );
  assertThrows(
    () => configure(nested, "w", { keys: ["y", 2] }),
    Error,
    'key "keys[1]" expected a string, received 2',
  );
});

Deno.test("configure: unknown keys and wrong types are errors naming component, key and values", () => {
  assertThrows(
    () => configure(POLICY_LOSS_FN, "ppo", { clip_rnage: 0.3 }),
    Error,
    'Cannot configure policy loss fn "ppo": unknown key "clip_rnage"; known: clip_range, clip_range_high, clip_range_low, clip_ratio_c, delta_sequence_masking, enable_sequence_masking, fallback_to_policy_gradient, loss_agg_mode, loss_scale_factor. Did you mean "clip_range"?',
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

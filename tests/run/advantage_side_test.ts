/**
 * Which component applies a resolved algorithm's advantages (`advantageFnFor`): the explorer's
 * pipeline for fns it computes, the trainer for trainer-side fns and types, and the trainer in
 * mode `train`. Config resolution only; no GPU work.
 */

import { assertEquals } from "../_asserts.ts";
import { ADVANTAGE_FN } from "../../src/algorithm/advantage/mod.ts";
import type { ConfiguredAdvantageFn } from "../../src/algorithm/apply_advantages.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import type { RunMode } from "../../src/config/run_config.ts";
import { advantageFnFor, resolveAlgorithm } from "../../src/algorithm/resolve_algorithm.ts";
import { withFixture } from "./_fixture.ts";

Deno.test("advantageFnFor: one side applies the advantages, as the algorithm and mode say", async () => {
  await withFixture(async (fixture) => {
    /** The advantage fn names [explorer's, trainer's] of `algorithm` in `mode`. */
    const sides = async (algorithm: Record<string, unknown>, mode: RunMode) => {
      const config = await loadConfig(await fixture.writeConfig({ algorithm }));
      const resolved = resolveAlgorithm(config.stages[0].algorithm);
      const named = (fn: ConfiguredAdvantageFn | undefined) =>
        fn && ADVANTAGE_FN.names().find((name) => ADVANTAGE_FN.get(name) === fn.entry);
      return [
        resolved.advantageSide,
        named(advantageFnFor(resolved, "explorer", mode)),
        named(advantageFnFor(resolved, "trainer", mode)),
      ];
    };
    assertEquals(await sides({ algorithm_type: "grpo" }, "both"), ["explorer", "grpo", undefined]);
    assertEquals(await sides({ algorithm_type: "grpo" }, "explore"), [
      "explorer",
      "grpo",
      undefined,
    ]);
    assertEquals(await sides({ algorithm_type: "grpo" }, "train"), ["explorer", undefined, "grpo"]);
    assertEquals(await sides({ algorithm_type: "ppo" }, "both"), ["trainer", undefined, "ppo"]);
    assertEquals(await sides({ algorithm_type: "rloo" }, "both"), ["trainer", undefined, "rloo"]);
    assertEquals(await sides({ algorithm_type: "grpo", advantage_fn: "rloo" }, "both"), [
      "trainer",
      undefined,
      "rloo",
    ]);
    assertEquals(await sides({ algorithm_type: "sft" }, "train"), [
      "explorer",
      undefined,
      undefined,
    ]);
  });
});

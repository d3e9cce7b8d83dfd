/**
 * The task-selection keys in a config: Trinity's `tasksets` list with `data_selector`
 * (`selector_type`, `seed`, `feature_keys`, `kwargs`) read onto rft's keys, a single `taskset`
 * still read as a list of one, weights and lessons, and one-line errors for what cannot work.
 */

import { loadConfig } from "../../src/config/load_config.ts";
import { validateComponents } from "../../src/run/validate_components.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { loadError, withFixture, writeConfig } from "../config/_fixture.ts";

const TWO_TASKSETS = `model:
  model_path: model
buffer:
  explorer_input:
    tasksets:
      - name: easy
        path: data/train.jsonl
        weight: 3
        lesson: { window: 2, graduate_pass_rate: 0.9 }
        data_selector:
          selector_type: difficulty_based
          seed: 11
          feature_keys: [low, high]
          kwargs: { target_reward: 0.5, tau: 0.1 }
      - name: hard
        path: data/eval.jsonl
        lesson: { requires: easy, unlock_pass_rate: 0.6 }
`;

Deno.test("config: tasksets with Trinity's data_selector are read onto rft's keys", async () => {
  await withFixture(async (dir) => {
    const config = await loadConfig(await writeConfig(dir, TWO_TASKSETS), { env: {} });
    const [easy, hard] = config.stages[0].buffer.explorerInput.tasksets;
    assertEquals(
      [easy.selector, easy.seed, easy.featureKeys, easy.selectorArgs, easy.weight],
      ["difficulty_based", 11, ["low", "high"], { target_reward: 0.5, tau: 0.1 }, 3],
    );
    assertEquals(easy.lesson, { window: 2, graduatePassRate: 0.9, unlockPassRate: 0 });
    assertEquals([hard.selector, hard.seed, hard.weight], ["sequential", 42, undefined]);
    assertEquals(hard.lesson, { window: 4, requires: "easy", unlockPassRate: 0.6 });
    assertEquals(config.ignoredTrinityKeys, []);
    validateComponents(config);
    // One taskset is a list of one.
    const single = await loadConfig(
      await writeConfig(
        dir,
        "model:\n  model_path: model\nbuffer:\n  explorer_input:\n    taskset:\n      path: data/train.jsonl\n",
      ),
      { env: {} },
    );
    assertEquals(single.stages[0].buffer.explorerInput.tasksets.map((t) => t.name), ["train"]);
  });
});

Deno.test("config: task-selection mistakes are one-line errors naming the key", async () => {
  await withFixture(async (dir) => {
    const F = `${dir}/config.yaml`;
    const both = TWO_TASKSETS.replace(
      "    tasksets:",
      "    taskset:\n      path: data/train.jsonl\n    tasksets:",
    );
    assertEquals(
      await loadError(dir, both),
      `${F}:7: buffer.explorer_input.tasksets: expected either taskset or tasksets, found both (list the first taskset in tasksets)`,
    );
    assertEquals(
      await loadError(dir, TWO_TASKSETS.replace("requires: easy", "requires: medium")),
      `${F}:17: buffer.explorer_input.tasksets[1].lesson.requires: expected the name of another taskset of tasksets (easy, hard), found "medium"`,
    );
    assertEquals(
      await loadError(dir, TWO_TASKSETS.replace("name: hard", "name: easy")),
      `${F}:15: buffer.explorer_input.tasksets[1]: expected tasksets with unique names, found "easy" twice (set name)`,
    );
    assertEquals(
      await loadError(dir, TWO_TASKSETS.replace("weight: 3", "weight: 0")),
      `${F}:8: buffer.explorer_input.tasksets[0].weight: expected a number > 0, found 0`,
    );
    const unknown = await loadConfig(
      await writeConfig(dir, TWO_TASKSETS.replace("difficulty_based", "difficulty")),
      { env: {} },
    );
    assertThrows(
      () => validateComponents(unknown),
      Error,
      `buffer.explorer_input.tasksets[0].selector: Unknown task selector "difficulty"; known: difficulty_based, offline_easy2hard, random, sequential, shuffle. Did you mean "difficulty_based"?`,
    );
    const badArg = await loadConfig(
      await writeConfig(dir, TWO_TASKSETS.replace("tau: 0.1", "temperature: 0.1")),
      { env: {} },
    );
    assertThrows(
      () => validateComponents(badArg),
      Error,
      `buffer.explorer_input.tasksets[0].selector_args: Cannot configure task selector "difficulty_based": unknown key "temperature"`,
    );
  });
});

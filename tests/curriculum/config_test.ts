/**
 * The task-selection keys in a config: Trinity's `tasksets` list with `data_selector`
 * (`selector_type`, `seed`, `feature_keys`, `kwargs`) read onto rft's keys, a single `taskset`
 * still read as a list of one, weights and lessons, and one-line errors for what cannot work.
 */

import { loadConfig } from "../../src/config/load_config.ts";
import { exploredTasksets } from "../../src/config/run_config.ts";
import { validateComponents } from "../../src/run/run_components.ts";
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
    assertEquals(exploredTasksets(single.stages[0].buffer.explorerInput).map((t) => t.name), [
      "train",
    ]);
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
    assertEquals(
      await loadError(dir, TWO_TASKSETS.replace("difficulty_based", "difficulty")),
      `${F}:11: buffer.explorer_input.tasksets[0].data_selector.selector_type: expected a known value, found "difficulty"; known: difficulty_based, offline_easy2hard, random, sequential, shuffle. Did you mean "difficulty_based"?`,
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

Deno.test("config: the addition curriculum example loads, its components check, its data is seeded", async () => {
  const path = new URL("../../examples/addition/curriculum/config.yaml", import.meta.url).pathname;
  const config = await loadConfig(path, { env: {} });
  validateComponents(config);
  const [sums] = config.stages[1].buffer.explorerInput.tasksets;
  assertEquals(
    [sums.selector, sums.featureKeys, sums.selectorArgs.target_reward],
    ["difficulty_based", ["pass_low", "pass_high"], 0.5],
  );
  const { makeCurriculumData } = await import("../../examples/addition/curriculum/make_data.ts");
  const data = makeCurriculumData();
  assertEquals(data, makeCurriculumData());
  const lengths = Object.fromEntries(
    Object.entries(data).map(([name, rows]) => [name, rows.length]),
  );
  assertEquals(lengths, {
    train: 1600,
    sft: 3600,
    eval_1digit: 30,
    eval_2digit: 200,
    eval_5digit: 100,
  });
  const digits = data.train.map((r) => r.digits);
  assertEquals([1, 2, 5].map((d) => digits.filter((x) => x === d).length), [400, 400, 800]);
  const seen = new Set([...data.train.map((r) => r.prompt), ...data.sft.map((r) => r.prompt)]);
  for (const name of ["eval_1digit", "eval_2digit", "eval_5digit"]) {
    const rows = data[name] as { prompt: string }[];
    assertEquals(rows.some((r) => seen.has(r.prompt)), false, `${name} is held out`);
  }
  assertEquals(data.sft.some((r) => r.prompt.length > 6), false, "no 5-digit demonstrations");
  const row = data.train.find((r) => r.digits === 5)!;
  const [a, b] = row.prompt.slice(0, -1).split("+").map(Number);
  assertEquals([row.answer, row.pass_high], [[...String(a + b)].reverse().join(""), 0]);
  const written = await Deno.readTextFile(
    new URL("../../examples/addition/curriculum/data/train.jsonl", import.meta.url),
  );
  assertEquals(
    JSON.parse(written.split("\n")[0]),
    data.train[0],
    "data/ is what make_data.ts writes",
  );
});

/**
 * `checkClusterTaskset`: a cluster trainer feeds one taskset drawn ahead of the explorers, so a
 * config that needs reward feedback (several tasksets, difficulty_based, a lesson) is refused in
 * one line before the run starts.
 */

import { loadConfig } from "../../src/config/load_config.ts";
import { checkClusterTaskset } from "../../src/run/run_stage.ts";
import { InputError } from "../../src/util/input_error.ts";
import { assertEquals } from "../_asserts.ts";
import { BASE, withFixture, writeConfig } from "../config/_fixture.ts";

/** "ok", or the InputError message of checking the config `text`. */
async function check(dir: string, text: string): Promise<string> {
  const config = await loadConfig(await writeConfig(dir, text), { env: {} });
  try {
    checkClusterTaskset(config.stages[0]);
    return "ok";
  } catch (err) {
    if (err instanceof InputError) return err.message;
    throw err;
  }
}

const TASKSETS = `model:
  model_path: model
buffer:
  explorer_input:
    tasksets:
`;

Deno.test("checkClusterTaskset: one plain taskset passes; feedback-driven selection is refused", async () => {
  await withFixture(async (dir) => {
    assertEquals(await check(dir, BASE), "ok");
    const refused = (found: string) =>
      `main: buffer.explorer_input: a cluster run feeds its explorers one taskset drawn ahead, without reward feedback; expected one taskset without difficulty_based or lesson, found ${found}`;
    assertEquals(
      await check(
        dir,
        `${TASKSETS}      - { name: a, path: data/train.jsonl }\n      - { name: b, path: data/eval.jsonl }\n`,
      ),
      refused("2 tasksets"),
    );
    assertEquals(
      await check(
        dir,
        `${TASKSETS}      - name: a\n        path: data/train.jsonl\n        data_selector: { selector_type: difficulty_based }\n`,
      ),
      refused('selector "difficulty_based"'),
    );
  });
});

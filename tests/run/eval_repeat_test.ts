/**
 * Eval `repeat_times` (Trinity's eval taskset key): each eval task is rolled out k times and the
 * evaluation logs `eval/<name>/mean@k` (the mean accuracy over all k samples of every task) and
 * `best@k` (the share of tasks with an accurate sample).
 */

import { loadConfig } from "../../src/config/load_config.ts";
import { runConfig } from "../../src/run/run.ts";
import { assertEquals } from "../_asserts.ts";
import { metricsRows, quiet, TASKSET_KEYS, withFixture } from "./_fixture.ts";

Deno.test("an eval taskset with repeat_times 3 logs mean@3 and best@3 over 3 samples per task", async () => {
  await withFixture(async (f) => {
    const file = await f.writeConfig({
      buffer: {
        total_steps: 1,
        explorer_input: {
          eval_tasksets: [{
            name: "held_out",
            path: "./data/eval.jsonl",
            repeat_times: 3,
            rollout_args: { temperature: 1 },
            ...TASKSET_KEYS,
          }],
        },
      },
    }, "repeat.yaml");
    await runConfig(await loadConfig(file), quiet);
    const evals = (await metricsRows(f.runDir("repeat"))).filter((r) =>
      "eval/held_out/mean@3" in r
    );
    assertEquals(evals.map((r) => r.step), [0, 1]);
    for (const r of evals) {
      // 3 eval tasks x 3 samples.
      assertEquals(r["eval/held_out/count"], 9);
      assertEquals(r["eval/held_out/mean@3"], r["eval/held_out/accuracy"]);
      const best = r["eval/held_out/best@3"]!;
      assertEquals([0, 1 / 3, 2 / 3, 1].includes(best), true, `best@3 ${best}`);
      assertEquals(best >= r["eval/held_out/mean@3"]!, true);
    }
  });
});

/**
 * `reward_fn_args` through `rft run`: the training taskset's args reach the reward fn of its
 * rollouts, each eval taskset's its own, over the fn's defaults.
 */

import { loadConfig } from "../../src/config/load_config.ts";
import { readExperienceDir } from "../../src/buffer/experience_io.ts";
import { runConfig } from "../../src/run/run.ts";
import { assertEquals } from "../_asserts.ts";
import { metricsRows, quiet, TASKSET_KEYS, withFixture } from "./_fixture.ts";

Deno.test("rft run: each taskset's reward_fn_args score its own tasks", async () => {
  await withFixture(async (fixture) => {
    const file = await fixture.writeConfig({
      buffer: {
        total_steps: 1,
        explorer_input: {
          taskset: { reward_fn_args: { correct_reward: 5, wrong_reward: -1 } },
          eval_tasksets: [{
            name: "held_out",
            path: "./data/eval.jsonl",
            rollout_args: { temperature: 0 },
            reward_fn_args: { correct_reward: 7, wrong_reward: 3 },
            ...TASKSET_KEYS,
          }],
        },
      },
      explorer: { eval_on_startup: true },
    }, "args.yaml");
    await runConfig(await loadConfig(file), quiet);
    const { experiences } = await readExperienceDir(`${fixture.runDir("args")}/experiences`);
    assertEquals(experiences.length, 4);
    for (const exp of experiences) {
      assertEquals(exp.reward, exp.metrics!.accuracy === 1 ? 5 : -1, JSON.stringify(exp.metrics));
    }
    const evals = (await metricsRows(fixture.runDir("args")))
      .filter((r) => "eval/held_out/reward_mean" in r);
    assertEquals(evals.length > 0, true);
    for (const r of evals) {
      const accuracy = r["eval/held_out/accuracy"] as number;
      const expected = 3 + 4 * accuracy;
      const mean = r["eval/held_out/reward_mean"] as number;
      assertEquals(Math.abs(mean - expected) < 1e-9, true, JSON.stringify(r));
    }
  });
});

/** `rft run` with algorithm_type dpo: preference pairs from a dataset, bad rows skipped. */

import assert from "node:assert/strict";
import { assertEquals } from "../_asserts.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { runConfig } from "../../src/run/run.ts";
import { metricsRows, trainRows, withFixture } from "./_fixture.ts";

Deno.test("dpo: the chosen-minus-rejected margin grows from 0; a bad row is skipped and counted", async () => {
  await withFixture(async (f) => {
    const rows = [];
    for (let i = 0; i < 12; i++) {
      const [a, b] = [i % 10, (3 * i + 1) % 10];
      rows.push({ prompt: `${a}+${b}=`, chosen: String(a + b), rejected: String(a + b + 1) });
    }
    rows.splice(5, 0, { prompt: "1+1=", chosen: "2" } as (typeof rows)[number]); // no rejected
    await Deno.writeTextFile(
      `${f.dir}/data/prefs.jsonl`,
      rows.map((r) => JSON.stringify(r)).join("\n"),
    );
    const lines: string[] = [];
    const file = await f.writeConfig({
      name: "dpo",
      mode: "train",
      algorithm: { algorithm_type: "dpo", optimizer: { lr: 0.02 } },
      buffer: {
        total_steps: 4,
        train_batch_size: 3,
        total_epochs: 2,
        trainer_input: {
          sft_warmup_dataset: {
            path: "./data/prefs.jsonl",
            format: { prompt_key: "prompt", chosen_key: "chosen", rejected_key: "rejected" },
          },
        },
      },
      explorer: { eval_interval: 0, eval_on_startup: false },
    }, "dpo.yaml");
    await runConfig(await loadConfig(file), { log: (l) => lines.push(l) });
    const train = trainRows(await metricsRows(f.runDir("dpo")));
    assertEquals(train.map((r) => r.step), [1, 2, 3, 4]);
    const margin = (r: (typeof train)[number]) =>
      Number(r["actor/chosen_reward"]) - Number(r["actor/rejected_reward"]);
    // Step 1 sees the policy equal to its reference: every log-ratio, so the margin, is 0.
    assert(Math.abs(margin(train[0])) < 1e-6, JSON.stringify(train[0]));
    assert(margin(train[3]) > 0.01, JSON.stringify(train.map(margin)));
    assert(Number(train[3]["actor/dpo_loss"]) < Math.log(2), JSON.stringify(train[3]));
    // 3 rows a step, 2 experiences a row: the bad row is left out at load, never drawn.
    assert(train.every((r) => r["actor/batch_size"] === 6), JSON.stringify(train));
    assertEquals(train.at(-1)!["data/skipped_rows_total"], 1);
    // Reported once, by its line in the file.
    const reports = lines.filter((l) => l.includes("skipped ") && l.includes("rejected"));
    assertEquals(reports.length, 1, lines.join("\n"));
    assert(reports[0].includes("prefs.jsonl line 6: "), reports[0]);
  });
});

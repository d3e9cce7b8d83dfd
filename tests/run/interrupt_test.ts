/**
 * Ctrl-C during a run (its signal aborted while a stage trains): the step under way ends, a
 * checkpoint of it is written although `save_interval` is not due, and the same run started again
 * resumes from that checkpoint and finishes.
 */

import { assertEquals, assertRejects } from "../_asserts.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { runConfig } from "../../src/run/run.ts";
import { setLineSink } from "../../src/util/status_lines.ts";
import { checkpointSteps, withFixture } from "./_fixture.ts";

Deno.test("Ctrl-C writes a checkpoint of the last step done; the run resumes from it", async () => {
  await withFixture(async (f) => {
    const path = await f.writeConfig({
      name: "stopped",
      mode: "train",
      algorithm: { algorithm_type: "sft" },
      buffer: { total_steps: 6, train_batch_size: 4 },
      trainer: { save_interval: 100 },
      monitor: { tensorboard: false, console: true },
    });
    const controller = new AbortController();
    const lines: string[] = [];
    const previous = setLineSink({
      write: (text) => {
        lines.push(text);
        if (text.startsWith("step 2/6")) controller.abort(new Error("interrupted"));
      },
      isTerminal: false,
      columns: () => 200,
    });
    const config = await loadConfig(path);
    try {
      await assertRejects(
        () => runConfig(config, { log: (line) => lines.push(line), signal: controller.signal }),
        Error,
        "interrupted",
      );
      const runDir = f.runDir("stopped");
      const [saved] = await checkpointSteps(runDir);
      assertEquals(saved >= 2 && saved < 6, true, `checkpoint step_${saved}`);
      assertEquals(lines.some((l) => l.includes(`checkpoint step_${saved} written`)), true);
      const resumed = await runConfig(config, { log: (line) => lines.push(line) });
      assertEquals(resumed.stages[0].outcome.steps, 6);
      assertEquals(lines.some((l) => l.includes(`checkpoints/step_${saved}`)), true, "resumed");
    } finally {
      setLineSink(previous);
    }
  });
});

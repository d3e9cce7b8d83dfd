import { assertEquals } from "../_asserts.ts";
import { main, PHASES } from "../../bench/step.ts";

const BATCH_SIZE = 2;
const REPEAT_TIMES = 2;
const MAX_RESPONSE_TOKENS = 6; // examples/addition/config.yaml

Deno.test("bench/step.ts runs one tiny RL step and writes its phase split as JSON", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/step.json`;
  try {
    await main([
      "--steps=1",
      "--warmup=0",
      `--set=stages[1].buffer.batch_size=${BATCH_SIZE}`,
      `--set=stages[1].algorithm.repeat_times=${REPEAT_TIMES}`,
      `--json=${file}`,
    ]);
    const report = JSON.parse(await Deno.readTextFile(file));
    for (const key of ["bench", "adapter", "deno", "date", "stage", "meanSeconds", "steps"]) {
      assertEquals(key in report, true, `report has "${key}"`);
    }
    assertEquals([report.bench, report.stage, report.steps.length], ["step", "grpo", 1]);
    const [step] = report.steps;
    assertEquals([step.tasks, step.experiences], [BATCH_SIZE, BATCH_SIZE * REPEAT_TIMES]);
    const tokensInRange = step.responseTokens >= step.experiences &&
      step.responseTokens <= step.experiences * MAX_RESPONSE_TOKENS;
    assertEquals(tokensInRange, true, `${step.responseTokens} generated tokens`);
    for (const phase of PHASES) {
      assertEquals(step.seconds[phase] >= 0, true, `${phase}: ${step.seconds[phase]} s`);
    }
    assertEquals(step.seconds.generate > 0 && step.seconds.train > 0, true);
    const sum = PHASES.reduce((s, phase) => s + step.seconds[phase], 0);
    assertEquals(
      Math.abs(sum - step.seconds.total) < 1e-9,
      true,
      `${sum} vs ${step.seconds.total}`,
    );
    assertEquals(report.meanSeconds, step.seconds, "the mean of one step is that step");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

import { assertEquals } from "../_asserts.ts";
import { main } from "../../bench/real_size.ts";

Deno.test("bench/real_size.ts runs Trinity's GRPO config through ./rft run and reports each step", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/real_size.json`;
  try {
    await main([
      "--model=qwen-tiny",
      "--steps=2",
      "--batch=1",
      "--repeat=2",
      "--response=4",
      `--dir=${dir}/run`,
      `--json=${file}`,
    ]);
    const report = JSON.parse(await Deno.readTextFile(file));
    assertEquals([report.bench, report.model], ["real_size", "qwen-tiny"]);
    assertEquals(report.parameters > 9e6 && report.parameters < 11e6, true, report.parameters);
    assertEquals(report.steps.map((s: { step: number }) => s.step), [1, 2]);
    for (const step of report.steps) {
      for (const key of ["wallS", "exploreS", "trainS", "rolloutTokensPerS", "trainTokensPerS"]) {
        assertEquals(step[key] > 0, true, `step ${step.step}: ${key} = ${step[key]}`);
      }
      assertEquals(step.responseLength >= 1 && step.responseLength <= 4, true);
      // 151936 model rows, 151669 tokenizer ids: a sampled padding id is no failure.
      assertEquals(step.retries, 0, `step ${step.step}: retries`);
    }
    const hasTime = await Deno.stat("/usr/bin/time").then(() => true, () => false);
    assertEquals(
      Number.isFinite(report.peakResidentKb),
      hasTime,
      `peak resident memory ${report.peakResidentKb} kB`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

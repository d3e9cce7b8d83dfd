import { assertEquals } from "../_asserts.ts";
import { formatSummary } from "../../src/cli/run_summary.ts";

Deno.test("the run summary names each stage's final checkpoint and the model the run ended with", () => {
  const lines = formatSummary({
    runDir: "runs/a/b",
    seconds: 434,
    plot: "runs/a/b/plot.html",
    stages: [
      {
        name: "sft",
        outcome: {
          steps: 700,
          finalCheckpoint: "runs/a/b/sft/checkpoints/step_700",
          lastEval: { "eval/held_out/accuracy": 0.505, "eval/held_out/count": 200 },
        },
      },
      {
        name: "grpo",
        outcome: {
          steps: 94,
          finalCheckpoint: "runs/a/b/grpo/checkpoints/step_94",
          lastEval: { "eval/held_out/accuracy": 0.995 },
        },
      },
    ],
  });
  assertEquals(lines, [
    "run finished in 7 min 14 s: runs/a/b",
    "  stage sft: 700 steps; eval/held_out/accuracy 0.505; checkpoint runs/a/b/sft/checkpoints/step_700",
    "  stage grpo: 94 steps; eval/held_out/accuracy 0.995; checkpoint runs/a/b/grpo/checkpoints/step_94",
    "  final model: runs/a/b/grpo/checkpoints/step_94 (./rft generate, serve and export take it " +
    "with --model, or the run directory)",
    "  plot: runs/a/b/plot.html",
  ]);
});

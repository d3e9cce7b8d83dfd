/**
 * The lines `rft run` prints when a run ends: its time and directory, each stage's steps, last
 * evaluation and final checkpoint, the model the run ended with (what `generate`, `serve` and
 * `export` take, as does the run directory) and the plot.
 */

import type { RunSummary } from "../run/run.ts";

/** The summary lines of `summary`. */
export function formatSummary(summary: RunSummary): string[] {
  const lines = [`run finished in ${formatSeconds(summary.seconds)}: ${summary.runDir}`];
  for (const { name, outcome } of summary.stages) {
    if (outcome.skipped) {
      lines.push(`  stage ${name}: skipped (nothing for this process to do)`);
      continue;
    }
    const evals = Object.entries(outcome.lastEval)
      .filter(([key]) => /^eval\/[^/]+\/(accuracy|reward_mean)$/.test(key))
      .map(([key, value]) => `${key} ${value.toFixed(3)}`);
    const checkpoint = outcome.finalCheckpoint ? `; checkpoint ${outcome.finalCheckpoint}` : "";
    lines.push(
      `  stage ${name}: ${outcome.steps} steps${
        evals.length ? `; ${evals.join(", ")}` : ""
      }${checkpoint}`,
    );
  }
  const final = summary.stages.findLast((s) => s.outcome.finalCheckpoint)?.outcome.finalCheckpoint;
  if (final) {
    lines.push(
      `  final model: ${final} (./rft generate, serve and export take it with --model, or the ` +
        "run directory)",
    );
  }
  if (summary.plot) lines.push(`  plot: ${summary.plot}`);
  return lines;
}

function formatSeconds(s: number): string {
  return s < 60 ? `${s.toFixed(1)} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

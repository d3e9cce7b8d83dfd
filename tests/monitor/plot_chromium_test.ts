/**
 * `rft plot`'s page of a real two-stage run (SFT, then GRPO with a KL loss) read in headless
 * Chromium: the stage boundary is drawn, the KL, gradient-norm and learning-rate lines are
 * drawn where metrics.jsonl puts them (each path's pixels mapped back through its segment's
 * scales give the logged values), every stage has its own segment, and hovering a step shows
 * its values. The page loads nothing from the network.
 */

import { assertEquals } from "../_asserts.ts";
import { withChromiumPage } from "../_chromium.ts";
import { writePlot } from "../../src/monitor/plot.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { runConfig } from "../../src/run/run.ts";
import { quiet, withFixture } from "../run/_fixture.ts";
import { type MetricsRow, readMetrics } from "../../src/monitor/metrics_log.ts";

/** A row of metrics.jsonl with its stage. */
interface StagedRow {
  row: MetricsRow;
  stage?: string;
}

/** What the page draws, read in the browser. */
interface DrawnChart {
  title: string;
  boundaries: string[];
  segments: {
    stage: string;
    x: number[];
    y: number[];
    paths: { key: string; d: string; points: string }[];
  }[];
}

const READ_CHARTS = `[...document.querySelectorAll("figure.chart")].map((fig) => ({
  title: fig.dataset.title,
  boundaries: [...fig.querySelectorAll("line.stage-boundary")].map((l) => l.dataset.stage),
  segments: [...fig.querySelectorAll("g.segment")].map((g) => ({
    stage: g.dataset.stage,
    x: g.dataset.x.split(" ").map(Number),
    y: g.dataset.y.split(" ").map(Number),
    paths: [...g.querySelectorAll("path.series")].map((p) => ({
      key: p.dataset.series, d: p.getAttribute("d"), points: p.dataset.points,
    })),
  })),
}))`;

/** The [step, value] points a path's pixels stand for, through its segment's scales. */
function drawnPoints(d: string, x: number[], y: number[]): [number, number][] {
  const [xLo, xHi, left, right] = x;
  const [yLo, yHi, bottom, top] = y;
  return [...d.matchAll(/[ML]([\d.]+),([\d.]+)/g)].map(([, px, py]) => [
    xLo + ((Number(px) - left) / (right - left)) * (xHi - xLo),
    yLo + ((Number(py) - bottom) / (top - bottom)) * (yHi - yLo),
  ]);
}

/** Asserts chart `title` draws `key` in `stage` at the values metrics.jsonl holds. */
function assertDrawn(
  charts: DrawnChart[],
  rows: StagedRow[],
  title: string,
  key: string,
  stage: string,
) {
  const chart = charts.find((c) => c.title === title);
  assertEquals(chart !== undefined, true, `chart "${title}" in ${charts.map((c) => c.title)}`);
  const segment = chart!.segments.find((s) => s.stage === stage);
  assertEquals(segment !== undefined, true, `"${title}" has a ${stage} segment`);
  const path = segment!.paths.find((p) => p.key === key);
  assertEquals(path !== undefined, true, `"${title}" draws ${key} in ${stage}`);
  const logged = rows.filter((r) => r.stage === stage && typeof r.row[key] === "number")
    .map(({ row }) => [row.step, row[key] as number]);
  const drawn = drawnPoints(path!.d, segment!.x, segment!.y);
  assertEquals(drawn.length, logged.length, `${key} in ${stage}: one point per logged step`);
  const [yLo, yHi] = segment!.y;
  drawn.forEach(([step, value], i) => {
    assertEquals(Math.abs(step - logged[i][0]) < 0.05, true, `${key} step ${step} ${logged[i]}`);
    const tolerance = (yHi - yLo) * 0.002;
    assertEquals(Math.abs(value - logged[i][1]) <= tolerance, true, `${key} ${value} ${logged[i]}`);
  });
}

Deno.test("plot.html in Chromium: stage boundary, KL, grad-norm and lr lines of a two-stage run, values on hover", async () => {
  await withFixture(async (f) => {
    const path = await f.writeConfig({
      name: "two_stages",
      explorer: { eval_interval: 2 },
      stages: [
        {
          stage_name: "sft",
          mode: "train",
          algorithm: { algorithm_type: "sft" },
          buffer: { total_steps: 4, train_batch_size: 4 },
        },
        {
          stage_name: "grpo",
          algorithm: {
            algorithm_type: "grpo",
            kl_loss_fn: "k3",
            kl_loss_fn_args: { kl_coef: 0.1 },
          },
          buffer: { total_steps: 3 },
        },
      ],
    });
    const summary = await runConfig(await loadConfig(path), quiet);
    const runDir = summary.runDir;
    const file = await readMetrics(`${runDir}/metrics.jsonl`);
    const rows: StagedRow[] = file.rows.map((row, i) => ({ row, stage: file.stages[i] }));
    const html = await Deno.readTextFile(await writePlot(runDir));
    assertEquals(/https?:\/\/|<script[^>]*src=|<link/.test(html), false, "self-contained");

    await withChromiumPage(`file://${runDir}/plot.html`, async (page) => {
      const charts = await page.evaluate<DrawnChart[]>(READ_CHARTS);
      const titles = charts.map((c) => c.title);
      for (const [title, key] of [["Loss", "actor/loss"], ["Learning rate", "actor/lr"]]) {
        assertDrawn(charts, rows, title, key, "sft");
        assertDrawn(charts, rows, title, key, "grpo");
      }
      assertDrawn(charts, rows, "Gradient norm (before clipping)", "actor/grad_norm", "sft");
      assertDrawn(charts, rows, "Gradient norm (before clipping)", "actor/grad_norm", "grpo");
      assertDrawn(charts, rows, "KL", "actor/kl", "grpo");
      assertDrawn(charts, rows, "Reward", "rollout/reward_mean", "grpo");
      // A stage boundary where grpo begins in the charts that span both stages.
      const lr = charts.find((c) => c.title === "Learning rate")!;
      assertEquals(lr.boundaries, ["grpo"]);
      assertEquals(lr.segments.map((s) => s.stage), ["sft", "grpo"]);
      // Metrics the GRPO stage alone has are drawn over it alone, with no boundary.
      const kl = charts.find((c) => c.title === "KL")!;
      assertEquals([kl.segments.map((s) => s.stage), kl.boundaries], [["grpo"], []]);
      assertEquals(titles.includes("Task pass rate per taskset"), false, "one taskset");
      assertEquals(titles.includes("Tasksets graduated"), false, "no lessons");

      // Hover the KL chart at grpo's second step: the tip names the step and the logged KL.
      const klRow = rows.filter((r) => r.stage === "grpo" && "actor/kl" in r.row)[1].row;
      const at = await page.evaluate<{ x: number; y: number }>(`(() => {
        const fig = [...document.querySelectorAll("figure.chart")]
          .find((f) => f.dataset.title === "KL");
        fig.scrollIntoView();
        const g = fig.querySelector('g.segment[data-stage="grpo"]');
        const [lo, hi, left, right] = g.dataset.x.split(" ").map(Number);
        const x = left + (${klRow.step} - lo) / (hi - lo) * (right - left);
        const m = fig.querySelector("svg").getScreenCTM();
        return { x: m.a * x + m.e, y: m.d * 100 + m.f };
      })()`);
      await page.mouseMove(at.x, at.y);
      const tip = await page.evaluate<string>(
        `[...document.querySelectorAll("figure.chart")].find((f) => f.dataset.title === "KL")` +
          `.querySelector(".tip").textContent`,
      );
      const value = Number((klRow["actor/kl"] as number).toPrecision(4));
      assertEquals(tip.startsWith(`stage grpo, step ${klRow.step}\n`), true, tip);
      assertEquals(tip.includes(`(actor/kl): ${value}`), true, `${value} in ${tip}`);
    });
  });
});

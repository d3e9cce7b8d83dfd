/** plot.html charts the task-selection metrics: pass rate per taskset, selected tasks, graduated. */

import { assertEquals } from "../_asserts.ts";
import { renderPlotHtml } from "../../src/monitor/plot.ts";

Deno.test("plot charts task pass rates per taskset, selected difficulty and graduations", () => {
  const rows = [1, 2, 3].map((step) => ({
    step,
    time: 1700000000 + step,
    "tasks/easy/pass_rate": 0.5 + step / 10,
    "tasks/hard/pass_rate": step / 10,
    "tasks/easy/selected_digits_p50": step,
    "tasks/easy/selected_digits_mean": step + 0.5,
    "tasks/graduated": step === 3 ? 1 : 0,
  }));
  const html = renderPlotHtml(rows, "run");
  const chart = (title: string) => {
    const start = html.indexOf(`<figcaption>${title}</figcaption>`);
    assertEquals(start >= 0, true, `no chart "${title}"`);
    return html.slice(start, html.indexOf("</figure>", start));
  };
  const passRates = chart("Task pass rate per taskset");
  assertEquals(passRates.match(/<path class="series"/g)?.length, 2);
  assertEquals(["easy</span>", "hard</span>"].map((l) => passRates.includes(l)), [true, true]);
  const selected = chart("Selected tasks");
  assertEquals(selected.includes("easy/selected_digits_p50</span>"), true);
  assertEquals(selected.match(/<path class="series"/g)?.length, 2);
  assertEquals(chart("Tasksets graduated").includes('<path class="series"'), true);
});

Deno.test("plot leaves out one taskset's pass rate (the reward) and graduations that never happen", () => {
  const rows = [1, 2].map((step) => ({
    step,
    time: 1700000000 + step,
    "rollout/reward_mean": step / 4,
    "tasks/train/pass_rate": step / 4,
    "tasks/graduated": 0,
  }));
  const html = renderPlotHtml(rows, "run");
  assertEquals(html.includes("<figcaption>Reward</figcaption>"), true);
  assertEquals(html.includes("Task pass rate"), false);
  assertEquals(html.includes("Tasksets graduated"), false);
});

Deno.test("plot gives each of many series its own colour", () => {
  const rows = [1, 2].map((step) => ({
    step,
    time: step,
    ...Object.fromEntries(
      Array.from({ length: 24 }, (_, i) => [`tasks/set${i}/selected_x_p50`, i + step]),
    ),
  }));
  const html = renderPlotHtml(rows, "run");
  const colours = [...html.matchAll(/<path class="series"[^>]* stroke="([^"]+)"/g)].map((m) =>
    m[1]
  );
  assertEquals(colours.length, 24);
  assertEquals(new Set(colours).size, 24);
});

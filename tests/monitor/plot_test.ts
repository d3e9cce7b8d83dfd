import { assertEquals, assertRejects } from "../_asserts.ts";
import { renderPlotHtml, writePlot } from "../../src/monitor/plot.ts";
import { niceScale } from "../../src/monitor/svg_chart.ts";

const LAUNCHER = new URL("../../rft", import.meta.url).pathname;

const ROWS = [
  { step: 1, time: 1700000000, "rollout/reward_mean": 0.1, "actor/loss": 0.9 },
  {
    step: 2,
    time: 1700000010,
    "rollout/reward_mean": 0.3,
    "actor/loss": null,
    "eval/gsm8k/accuracy": 0.2,
    "eval/math<500>/accuracy": 0.1,
  },
  { step: 3, time: 1700000020, "rollout/reward_mean": 0.5, "actor/loss": 0.4 },
  {
    step: 4,
    time: 1700000030,
    "rollout/reward_mean": 0.45,
    "actor/loss": 0.3,
    "eval/gsm8k/accuracy": 0.35,
    "eval/math<500>/accuracy": 0.15,
  },
];

async function withRun(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "rft_plot_" });
  try {
    const lines = ROWS.map((row) => JSON.stringify(row) + "\n").join("");
    await Deno.writeTextFile(`${dir}/metrics.jsonl`, lines + '{"step":5,"ti');
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The `<figure>` whose caption is `title`. */
function chart(html: string, title: string): string {
  const start = html.indexOf(`<figcaption>${title}</figcaption>`);
  assertEquals(start >= 0, true, `no chart "${title}"`);
  return html.slice(start, html.indexOf("</figure>", start));
}

Deno.test("plot draws one chart per metric present, one line per eval taskset", async () => {
  await withRun(async (dir) => {
    const path = await writePlot(dir);
    assertEquals(path, `${dir}/plot.html`);
    const html = await Deno.readTextFile(path);
    assertEquals(html.match(/<figure/g)?.length, 3, "reward, evaluation, loss");
    const evalChart = chart(html, "Evaluation (accuracy per taskset)");
    assertEquals(evalChart.match(/<path class="series"/g)?.length, 2);
    assertEquals(evalChart.includes("gsm8k</span>"), true);
    assertEquals(evalChart.includes("math&lt;500&gt;</span>"), true);
    assertEquals(evalChart.includes('data-points="2 0.2;4 0.35"'), true, evalChart);
    // A null value breaks the loss line: a lone point at step 1, then a segment from step 3.
    const lossChart = chart(html, "Loss");
    assertEquals(/d="M[\d.,]+M[\d.,]+L[\d.,]+"/.test(lossChart), true, lossChart);
    assertEquals(lossChart.match(/<circle/g)?.length, 3, "few points: each one marked");
    assertEquals(lossChart.includes("stage-boundary"), false, "one stage, no boundary");
    assertEquals(html.includes("4 rows; steps 1 to 4; 1 unreadable lines skipped"), true);
    assertEquals(
      html.includes("<tr><td>eval/math&lt;500&gt;/accuracy</td><td>0.15</td></tr>"),
      true,
    );
    assertEquals(/<script[^>]*src=|https?:\/\//.test(html), false, "no network");
  });
});

Deno.test("plot of two stages: each stage its own segment and scales, a boundary where the second begins", () => {
  const rows = [
    ...[1, 2, 3].map((step) => ({ step, time: step, "actor/loss": 3 - step / 2 })),
    ...[1, 2].map((step) => ({
      step,
      time: 10 + step,
      "actor/loss": step / 100,
      "rollout/reward_mean": 0.5,
      "rollout/reward_std": 0.25,
      "rollout/reward_min": 0.4,
      "rollout/reward_max": 0.6,
    })),
  ];
  const rowStages = ["sft", "sft", "sft", "grpo", "grpo"];
  const html = renderPlotHtml(rows, "run", { rowStages });
  const loss = chart(html, "Loss");
  assertEquals(loss.match(/<g class="segment" data-stage="(\w+)"/g)?.length, 2);
  assertEquals(loss.match(/class="stage-boundary" data-stage="grpo"/g)?.length, 1);
  assertEquals(loss.includes('data-points="1 2.5;2 2;3 1.5"'), true, "sft steps");
  assertEquals(loss.includes('data-points="1 0.01;2 0.02"'), true, "grpo steps from 1");
  assertEquals(/data-stage="grpo" data-x="1 2 [\d.]+ [\d.]+" data-y="0.01 0.02 /.test(loss), true);
  const reward = chart(html, "Reward");
  assertEquals(reward.match(/<g class="segment"/g)?.length, 1, "grpo alone");
  assertEquals(reward.includes('<path class="band"'), true, "mean ± std band");
  assertEquals(/data-y="0.4 0.6 /.test(reward), true, "the band within min and max: " + reward);
  assertEquals(html.includes("stage sft: steps 1 to 3; stage grpo: steps 1 to 2"), true);
});

Deno.test("plot charts an agent's episodes: success as eval accuracy, turns and tools, tokens", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rft_plot_" });
  try {
    const episode = (step: number, invalid: number) => ({
      step,
      time: 1700000000 + step,
      "rollout/reward_mean": 1 - invalid,
      "rollout/turns": 2,
      "rollout/tool_calls": 1,
      "rollout/invalid_tool_calls": invalid,
      "rollout/trained_tokens": 14,
      "rollout/masked_tokens": 13,
      "eval/held_out/success": 1 - invalid,
    });
    const rows = [episode(1, 0.5), episode(2, 0.1)];
    await Deno.writeTextFile(
      `${dir}/metrics.jsonl`,
      rows.map((r) => JSON.stringify(r) + "\n").join(""),
    );
    const html = await Deno.readTextFile(await writePlot(dir));
    assertEquals(html.match(/<figure/g)?.length, 4, "reward, eval, episodes, episode tokens");
    assertEquals(
      chart(html, "Evaluation (accuracy per taskset)").match(/<path class="series"/g)?.length,
      1,
    );
    const episodes = chart(html, "Agent episodes (mean per episode)");
    assertEquals(episodes.match(/<path class="series"/g)?.length, 3);
    for (const key of ["rollout/turns", "rollout/tool_calls", "rollout/invalid_tool_calls"]) {
      assertEquals(episodes.includes(`${key}</span>`), true, key);
    }
    const tokens = chart(html, "Episode tokens: trained vs masked");
    assertEquals(tokens.match(/<path class="series"/g)?.length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("plot --out writes elsewhere; a missing or empty run is a clear error", async () => {
  await withRun(async (dir) => {
    assertEquals(await writePlot(dir, `${dir}/other.html`), `${dir}/other.html`);
    await assertRejects(() => writePlot(`${dir}/nope`), Error, "the directory does not exist");
    await Deno.mkdir(`${dir}/empty`);
    await assertRejects(() => writePlot(`${dir}/empty`), Error, "it has no metrics.jsonl");
    await Deno.writeTextFile(`${dir}/empty/metrics.jsonl`, "garbage\n");
    await assertRejects(() => writePlot(`${dir}/empty`), Error, "has no readable rows");
  });
});

Deno.test("niceScale rounds the range out to about five round ticks", () => {
  assertEquals(niceScale(0.12, 0.87), {
    lo: 0,
    hi: 1,
    ticks: [0, 0.2, 0.4, 0.6, 0.8, 1],
  });
  assertEquals(niceScale(1, 37, true), { lo: 0, hi: 40, ticks: [0, 10, 20, 30, 40] });
  assertEquals(niceScale(5, 5, true), { lo: 4, hi: 6, ticks: [4, 5, 6] });
});

Deno.test("rft plot prints the page's path; a missing run dir exits 2 with the reason", async () => {
  await withRun(async (dir) => {
    const run = (args: string[]) =>
      new Deno.Command(LAUNCHER, { args, stdout: "piped", stderr: "piped" }).output();
    const ok = await run(["plot", dir, "--out", `${dir}/p.html`]);
    assertEquals(ok.code, 0, new TextDecoder().decode(ok.stderr));
    assertEquals(new TextDecoder().decode(ok.stdout), `${dir}/p.html\n`);
    const missing = await run(["plot", `${dir}/nope`]);
    assertEquals(missing.code, 2);
    assertEquals(
      new TextDecoder().decode(missing.stderr),
      `rft plot: Cannot plot run "${dir}/nope": the directory does not exist\n`,
    );
    const noArgs = await run(["plot"]);
    assertEquals(noArgs.code, 2);
    assertEquals(
      new TextDecoder().decode(noArgs.stderr).startsWith("rft plot: expected one RUN_DIR"),
      true,
    );
  });
});

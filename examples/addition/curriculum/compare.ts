/**
 * Compares runs of this example from their metrics.jsonl: held-out accuracy over the GRPO stage,
 * the first GRPO step reaching each threshold, the mean operand length of the drawn tasks and the
 * share of groups without GRPO signal (all rollouts pass or all fail), and the mean per selector.
 *
 *   ./rft deno run -A examples/addition/curriculum/compare.ts runs/addition_curriculum db_s7 rand_s7 ...
 *
 * A run's selector is the part of its name before `_` (`db`, `rand`).
 */

/** Accuracy thresholds whose first GRPO step is reported. */
const THRESHOLDS = [0.15, 0.2, 0.25, 0.3];

type Row = Record<string, number>;

const [root, ...names] = Deno.args;
const summaries = await Promise.all(names.map(async (name) => {
  const dir = `${root}/${name}`;
  const sftSteps = JSON.parse(await Deno.readTextFile(`${dir}/sft/stage_done.json`)).steps;
  const rows: Row[] = (await Deno.readTextFile(`${dir}/metrics.jsonl`)).trim().split("\n")
    .map((line) => JSON.parse(line)).filter((row) => row.step >= sftSteps);
  const accuracy = new Map<number, number>();
  for (const row of rows) {
    const value = row["eval/held_out/accuracy"];
    if (value !== undefined) accuracy.set(row.step - sftSteps, value);
  }
  const steps = rows.filter((row) => row["tasks/sums/drawn"] !== undefined);
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  // pass_high = 1 - (digits - 1) / 4 in make_data.ts, so digits = 1 + 4 (1 - pass_high).
  const digits = mean(steps.map((r) => 1 + 4 * (1 - r["tasks/sums/selected_pass_high_mean"])));
  const groups = steps.filter((r) => r["pipeline/pass_rate_calculator/groups"] !== undefined);
  const noSignal = groups.length === 0
    ? NaN
    : mean(groups.map((r) =>
      (r["pipeline/pass_rate_calculator/all_pass_groups"] +
        r["pipeline/pass_rate_calculator/no_pass_groups"]) /
      r["pipeline/pass_rate_calculator/groups"]
    ));
  const reach = THRESHOLDS.map((t) =>
    [...accuracy].sort(([a], [b]) => a - b).find(([, acc]) => acc >= t)?.[0]
  );
  const last = Math.max(...accuracy.keys());
  return { name, accuracy, last, reach, digits, noSignal };
}));

const fmt = (x: number | undefined, digits = 3) =>
  x === undefined || Number.isNaN(x) ? "-" : Number.isInteger(x) ? String(x) : x.toFixed(digits);
const evalSteps = [...new Set(summaries.flatMap((s) => [...s.accuracy.keys()]))].sort((a, b) =>
  a - b
);
console.log(
  `| run | ${evalSteps.map((s) => `acc@${s}`).join(" | ")} | ${
    THRESHOLDS.map((t) => `steps to ${t}`).join(" | ")
  } | drawn digits | no-signal groups |`,
);
console.log(`|${"---|".repeat(3 + evalSteps.length + THRESHOLDS.length)}`);
for (const s of summaries) {
  console.log(
    `| ${s.name} | ${evalSteps.map((e) => fmt(s.accuracy.get(e))).join(" | ")} | ${
      s.reach.map((r) => r ?? `>${s.last}`).join(" | ")
    } | ${fmt(s.digits, 2)} | ${fmt(s.noSignal, 2)} |`,
  );
}
for (const selector of [...new Set(names.map((n) => n.split("_")[0]))]) {
  const group = summaries.filter((s) => s.name.split("_")[0] === selector);
  const mean = (xs: (number | undefined)[]) =>
    xs.some((x) => x === undefined) ? undefined : xs.reduce((a, b) => a! + b!, 0)! / xs.length;
  console.log(
    `| **${selector} (mean of ${group.length})** | ${
      evalSteps.map((e) => fmt(mean(group.map((s) => s.accuracy.get(e))))).join(" | ")
    } | ${
      THRESHOLDS.map((_, i) => fmt(mean(group.map((s) => s.reach[i])), 1) ?? "-").join(" | ")
    } | ${fmt(mean(group.map((s) => s.digits)), 2)} | ${
      fmt(mean(group.map((s) => s.noSignal)), 2)
    } |`,
  );
}

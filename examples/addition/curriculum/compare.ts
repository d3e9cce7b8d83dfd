/**
 * Compares GRPO runs of this example: held-out accuracy on the learnable kind (2-digit sums) over
 * the GRPO stage, the first GRPO step reaching each threshold, accuracy on the whole mix (each
 * kind's held-out accuracy weighted by its share of the training taskset), and from the stored
 * experiences the share of drawn tasks that are 2-digit and the share of groups without GRPO
 * signal (all rollouts pass or all fail); then the mean per selector.
 *
 *   ./rft deno run -A examples/addition/curriculum/compare.ts runs/addition_curriculum db_7 rand_7 ...
 *
 * A run's selector is the part of its name before `_` (`db`, `rand`).
 */

import { readExperienceDir } from "../../../src/buffer/experience_io.ts";
import { KINDS } from "./make_data.ts";

/** Held-out accuracy thresholds whose first GRPO step is reported. */
const THRESHOLDS = [0.7, 0.8, 0.9];
/** GRPO steps shown in the accuracy curve. */
const CURVE_EVERY = 5;
/** Operand length of each eval taskset in config.yaml. */
const EVAL_DIGITS: Record<string, number> = { one_digit: 1, held_out: 2, five_digit: 5 };

type Row = Record<string, number>;
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const trainTotal = KINDS.reduce((sum, k) => sum + k.train, 0);
const share = (digits: number) => KINDS.find((k) => k.digits === digits)!.train / trainTotal;

/**
 * The GRPO stage's rows of a run, by GRPO step: rows name their stage (steps count per stage);
 * runs written before they did count on from the SFT stage's steps.
 */
async function grpoRows(dir: string): Promise<Row[]> {
  const lines = (await Deno.readTextFile(`${dir}/metrics.jsonl`)).trim().split("\n");
  const all: { stage?: string; row: Row }[] = lines.map((line) => {
    const { stage, ...row } = JSON.parse(line);
    return { stage, row };
  });
  if (all.some((r) => r.stage !== undefined)) {
    return all.filter((r) => r.stage === "grpo").map((r) => r.row);
  }
  const sftSteps = JSON.parse(await Deno.readTextFile(`${dir}/sft/stage_done.json`)).steps;
  return all.map((r) => r.row).filter((row) => row.step >= sftSteps)
    .map((row) => ({ ...row, step: row.step - sftSteps }));
}

/** One run's figures. */
async function summarize(dir: string) {
  const rows = await grpoRows(dir);
  const accuracy = new Map<number, number>(), mix = new Map<number, number>();
  for (const row of rows) {
    const step = row.step;
    if (row["eval/held_out/accuracy"] !== undefined) {
      accuracy.set(step, row["eval/held_out/accuracy"]);
    }
    const kinds = Object.entries(EVAL_DIGITS).map(([name, d]) => [row[`eval/${name}/accuracy`], d]);
    if (kinds.every(([acc]) => acc !== undefined)) {
      mix.set(step, kinds.reduce((sum, [acc, d]) => sum + acc * share(d), 0));
    }
  }
  const groups = new Map<string, { digits: number; rewards: number[] }>();
  for (const exp of (await readExperienceDir(`${dir}/grpo/experiences`)).experiences) {
    if (exp.isEval) continue;
    const group = groups.get(exp.info.taskId) ??
      { digits: exp.promptText!.split("+")[0].length, rewards: [] };
    group.rewards.push(exp.reward ?? 0);
    groups.set(exp.info.taskId, group);
  }
  const drawn = [...groups.values()];
  const byStep = [...accuracy].sort(([a], [b]) => a - b);
  const last = byStep[byStep.length - 1][0];
  return {
    accuracy,
    last,
    mixStart: mix.get(0),
    mixEnd: mix.get(last),
    reach: THRESHOLDS.map((t) => byStep.find(([, acc]) => acc >= t)?.[0]),
    twoDigitShare: drawn.filter((g) => g.digits === 2).length / drawn.length,
    noSignal: drawn.filter((g) => g.rewards.every((r) => r === g.rewards[0])).length /
      drawn.length,
  };
}

const [root, ...names] = Deno.args;
const runs = await Promise.all(names.map(async (name) => ({
  name,
  selector: name.split("_")[0],
  ...await summarize(`${root}/${name}`),
})));

const fmt = (x: number | undefined, digits = 3) =>
  x === undefined || Number.isNaN(x) ? "-" : Number.isInteger(x) ? String(x) : x.toFixed(digits);
const last = Math.max(...runs.map((r) => r.last));
const curve = Array.from({ length: Math.floor(last / CURVE_EVERY) + 1 }, (_, i) => i * CURVE_EVERY);
if (curve[curve.length - 1] !== last) curve.push(last);
console.log(
  `| run | ${curve.map((s) => `acc@${s}`).join(" | ")} | ${
    THRESHOLDS.map((t) => `steps to ${t}`).join(" | ")
  } | mix acc@0 | mix acc@${last} | 2-digit share of drawn | no-signal groups |`,
);
console.log(`|${"---|".repeat(5 + curve.length + THRESHOLDS.length)}`);
const line = (
  name: string,
  acc: (step: number) => number | undefined,
  reach: string[],
  rest: (number | undefined)[],
) =>
  console.log(
    `| ${name} | ${curve.map((s) => fmt(acc(s))).join(" | ")} | ${reach.join(" | ")} | ${
      rest.map((x) => fmt(x, 2)).join(" | ")
    } |`,
  );
/** The columns after the thresholds. */
const tail = (r: typeof runs[0]) => [r.mixStart, r.mixEnd, r.twoDigitShare, r.noSignal];
for (const r of runs) {
  line(
    r.name,
    (s) => r.accuracy.get(s),
    r.reach.map((x) => x === undefined ? `>${r.last}` : String(x)),
    tail(r),
  );
}
for (const selector of [...new Set(runs.map((r) => r.selector))]) {
  const group = runs.filter((r) => r.selector === selector);
  const avg = (xs: (number | undefined)[]) =>
    xs.some((x) => x === undefined) ? undefined : mean(xs as number[]);
  line(
    `**${selector} (mean of ${group.length})**`,
    (s) => avg(group.map((r) => r.accuracy.get(s))),
    THRESHOLDS.map((_, i) => {
      const steps = group.map((r) => r.reach[i]);
      const reached = steps.filter((x) => x !== undefined).length;
      return reached === group.length ? fmt(avg(steps), 1) : `${reached}/${group.length} reached`;
    }),
    tail(group[0]).map((_, i) => avg(group.map((r) => tail(r)[i]))),
  );
}

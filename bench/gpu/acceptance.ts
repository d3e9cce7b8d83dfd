/**
 * `deno run -A bench/gpu/acceptance.ts --dir DIR [--log FILE]`: issue 48's acceptance table from
 * the reports one run of `bench/gpu/acceptance.sh` leaves in DIR (train.json, decode.json,
 * matmul.json, as bench/train.ts, bench/decode.ts and bench/matmul.ts write them) and the suite
 * log (`rft info`'s features line: whether `subgroups` was granted and its probe passed). Each
 * row: the figure, its target, and whether it is met; a missing report reads "not measured".
 * Prints markdown, never asserts; exit 2 on a DIR without any report.
 */

import { benchArgs } from "../_flags.ts";
import { modelShape } from "../_model_shapes.ts";
import { figure } from "../_report.ts";

const SCRIPT = "bench/gpu/acceptance.ts";

/** One acceptance row: what, the measured figure (undefined: not measured), the target. */
export interface AcceptanceRow {
  figure: string;
  value?: string;
  target: string;
  /** Whether the target is met (undefined: no target, or not measured). */
  met?: boolean;
}

interface TrainReport {
  matmul: { size: number; before: { gflops: number }; after: { gflops: number } };
  results: { model: string; rows: number; len: number; modelGflops: number }[];
}

interface DecodeReport {
  decode: {
    model: string;
    batch: number;
    rft: number;
    ortNode: number;
    dispatchesPerStep: number;
    sameTokens: { ortNode: number };
  }[];
}

interface MatmulReport {
  matmul: { size: number; variant: string; rft: number; rftF16?: number }[];
}

/** The train step's model FLOPs over rft's own matmul rate in the same run (target >= 0.5). */
function trainRows(report?: TrainReport): AcceptanceRow[] {
  const what = "train step, model FLOPs / rft's matmul rate";
  if (!report) return [{ figure: what, target: ">= 0.50" }];
  const rate = Math.max(report.matmul.before.gflops, report.matmul.after.gflops);
  return report.results.map((r) => {
    const ratio = r.modelGflops / rate;
    return {
      figure: `${what} (${r.model} ${r.rows} x ${r.len}, ${report.matmul.size}^3 at ${
        figure(rate / 1000)
      } TFLOP/s)`,
      value: figure(ratio),
      target: ">= 0.50",
      met: ratio >= 0.5,
    };
  });
}

/** Decode tokens/s at batch 1 and 32, greedy tokens against onnxruntime-node's, dispatches. */
function decodeRows(report?: DecodeReport): AcceptanceRow[] {
  const targets: Record<number, number> = { 1: 500, 32: 6000 };
  if (!report) {
    return [1, 32].map((b) => ({
      figure: `decode batch ${b}, tokens/s`,
      target: `>= ${targets[b]}`,
    }));
  }
  return report.decode.flatMap((r) => {
    const target = targets[r.batch];
    const layers = Number(modelShape(r.model).num_hidden_layers);
    const rows: AcceptanceRow[] = [
      {
        figure: `decode ${r.model} batch ${r.batch}, tokens/s (onnxruntime-node ${
          figure(r.ortNode)
        })`,
        value: figure(r.rft),
        target: target ? `>= ${target}` : "-",
        met: target ? r.rft >= target : undefined,
      },
      {
        figure: `decode batch ${r.batch}, greedy tokens equal to onnxruntime-node's`,
        value: r.sameTokens.ortNode.toFixed(3),
        target: "1.000",
        met: r.sameTokens.ortNode === 1,
      },
    ];
    if (r.batch === 1) {
      const perLayer = r.dispatchesPerStep / layers;
      rows.push({
        figure:
          `decode batch 1, dispatches per step (${layers} layers; per layer incl. the head's)`,
        value: `${figure(r.dispatchesPerStep)} (${figure(perLayer)})`,
        target: "<= 8 per layer",
        met: perLayer <= 8,
      });
    }
    return rows;
  });
}

/** Matmul f32 at 2048^3 (target 35 TFLOP/s) and the f16-weight row beside each size. */
function matmulRows(report?: MatmulReport): AcceptanceRow[] {
  if (!report) return [{ figure: "matmul f32 2048^3, TFLOP/s", target: ">= 35" }];
  return report.matmul.flatMap((r) => {
    const rows: AcceptanceRow[] = [{
      figure: `matmul f32 ${r.size}^3, TFLOP/s (${r.variant})`,
      value: figure(r.rft / 1000),
      target: r.size === 2048 ? ">= 35" : "-",
      met: r.size === 2048 ? r.rft / 1000 >= 35 : undefined,
    }];
    if (r.rftF16 !== undefined) {
      rows.push({
        figure: `matmul by an f16 weight ${r.size}^3, TFLOP/s`,
        value: figure(r.rftF16 / 1000),
        target: "a row",
      });
    }
    return rows;
  });
}

/** `rft info`'s verdict on subgroups from the suite log (the last features line in it). */
export function subgroupsRow(log?: string): AcceptanceRow {
  const lines = log?.match(/^features .*$/gm) ?? [];
  const verdict = lines.at(-1)?.match(/subgroups (yes|no)/)?.[1];
  return {
    figure: "subgroups granted and its probe kernel right (rft info)",
    value: verdict,
    target: "say which",
  };
}

/** The acceptance rows of the reports (any may be missing) and the suite log. */
export function acceptanceRows(reports: {
  train?: TrainReport;
  decode?: DecodeReport;
  matmul?: MatmulReport;
  log?: string;
}): AcceptanceRow[] {
  return [
    ...trainRows(reports.train),
    ...decodeRows(reports.decode),
    ...matmulRows(reports.matmul),
    subgroupsRow(reports.log),
  ];
}

/** The rows as a markdown table. */
export function acceptanceMarkdown(rows: readonly AcceptanceRow[]): string {
  const verdict = (r: AcceptanceRow) =>
    r.value === undefined ? "not measured" : r.met === undefined ? "" : r.met ? "met" : "NOT met";
  return [
    "| figure | measured | target | verdict |",
    "| --- | --- | --- | --- |",
    ...rows.map((r) => `| ${r.figure} | ${r.value ?? "-"} | ${r.target} | ${verdict(r)} |`),
  ].join("\n");
}

async function readIfThere(file: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(file);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

async function main() {
  const { values } = benchArgs(SCRIPT, {
    args: Deno.args,
    options: { dir: { type: "string" }, log: { type: "string" } },
  });
  if (!values.dir) {
    console.error(`${SCRIPT}: expected --dir, the folder of the bench reports`);
    Deno.exit(2);
  }
  const json = async (name: string) => {
    const file = `${values.dir}/${name}.json`;
    const text = await readIfThere(file);
    try {
      return text === undefined ? undefined : JSON.parse(text);
    } catch (err) {
      console.error(`${SCRIPT}: ${file}: expected a bench report, JSON: ${(err as Error).message}`);
      Deno.exit(2);
    }
  };
  const [train, decode, matmul] = [await json("train"), await json("decode"), await json("matmul")];
  if (!train && !decode && !matmul) {
    console.error(`${SCRIPT}: ${values.dir}: expected train.json, decode.json or matmul.json`);
    Deno.exit(2);
  }
  const log = values.log ? await readIfThere(values.log) : undefined;
  console.log(acceptanceMarkdown(acceptanceRows({ train, decode, matmul, log })));
}

if (import.meta.main) await main();

/**
 * `deno task bench`: the benchmark suite, one script after another, each in its own process
 * (a fresh GPU device; ORT's worker threads end with it), at the default sizes (about ten
 * minutes on a 2-core CPU adapter). `--only NAME[,NAME]` runs some of them; `--json DIR` has
 * each write `DIR/<name>.json`; arguments after `--` go to every script run (e.g. bigger shapes
 * with `--only train -- --models smollm2-135m --rows 8 --len 256`). Ends with each script's
 * status and wall time; exits 1 when one failed. Measures nothing itself.
 */

import { formatTable } from "./_table.ts";
import { benchArgs } from "./_flags.ts";

/** A script of the suite. */
export interface BenchScript {
  name: string;
  /** File name in bench/. */
  file: string;
  /** One line for `--help`. */
  measures: string;
}

/** The suite, in the order it runs. */
export const SUITE: readonly BenchScript[] = [
  { name: "matmul", file: "matmul.ts", measures: "matmul GFLOP/s vs onnxruntime-web and -node" },
  { name: "forward", file: "forward.ts", measures: "prefill tokens/s vs onnxruntime-web/node" },
  { name: "decode", file: "decode.ts", measures: "decode tokens/s vs transformers.js, ORT" },
  { name: "train", file: "train.ts", measures: "fwd+bwd and train step (AdamW) tokens/s" },
  { name: "step", file: "step.ts", measures: "RL step of the example: generate/score/train/sync" },
  { name: "memory", file: "memory.ts", measures: "GPU bytes, all weights vs LoRA (computed)" },
  {
    name: "cluster",
    file: "cluster.ts",
    measures: "NATS: weight broadcast, rollouts/s by explorers",
  },
];

const HELP = `Usage: deno task bench [--only NAME[,NAME]] [--json DIR] [-- SCRIPT ARGS]
${SUITE.map((s) => `  ${s.name.padEnd(8)} bench/${s.file.padEnd(11)} ${s.measures}`).join("\n")}`;

/** How one script ended. */
interface Outcome {
  name: string;
  status: string;
  seconds: number;
}

/** The scripts `only` names (all when absent); throws naming an unknown one. */
export function selectScripts(only?: string): BenchScript[] {
  if (only === undefined) return [...SUITE];
  return only.split(",").map((name) => {
    const script = SUITE.find((s) => s.name === name);
    if (!script) {
      throw new Error(
        `Cannot run bench "${name}": expected one of ${SUITE.map((s) => s.name).join(", ")}`,
      );
    }
    return script;
  });
}

/** Runs `script` with `args` in a Deno process of its own, output passed through. */
async function runScript(script: BenchScript, args: readonly string[]): Promise<Outcome> {
  const path = new URL(script.file, import.meta.url).pathname;
  const start = performance.now();
  try {
    await Deno.stat(path);
  } catch {
    return { name: script.name, status: `skipped: no bench/${script.file}`, seconds: 0 };
  }
  console.log(`\n=== ${script.name} (bench/${script.file} ${args.join(" ")})`);
  const config = new URL("../deno.json", import.meta.url).pathname;
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-P=dev", "--config", config, path, ...args],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  return {
    name: script.name,
    status: code === 0 ? "ok" : `failed (exit ${code})`,
    seconds: (performance.now() - start) / 1000,
  };
}

async function main() {
  const { values, positionals } = benchArgs("bench/main.ts", {
    args: Deno.args,
    allowPositionals: true,
    options: {
      only: { type: "string" },
      json: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const scripts = selectScripts(values.only);
  if (values.json) await Deno.mkdir(values.json, { recursive: true });
  const outcomes: Outcome[] = [];
  for (const script of scripts) {
    const json = values.json ? ["--json", `${values.json}/${script.name}.json`] : [];
    outcomes.push(await runScript(script, [...json, ...positionals]));
  }
  const total = outcomes.reduce((sum, o) => sum + o.seconds, 0);
  console.log("\nbench suite");
  console.log(formatTable<Outcome>([
    ["script", (o) => o.name],
    ["status", (o) => o.status],
    ["wall s", (o) => o.seconds.toFixed(0)],
  ], [...outcomes, { name: "total", status: "", seconds: total }]));
  if (outcomes.some((o) => o.status.startsWith("failed"))) Deno.exit(1);
}

if (import.meta.main) await main();

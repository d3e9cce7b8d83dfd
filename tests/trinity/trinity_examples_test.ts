/**
 * Trinity-RFT's example configs (tests/trinity/configs, unchanged) with `./rft run` from a
 * Trinity-like tree's root (`_tree.ts`), each as `verdicts.ts` says: a config that runs
 * finishes with its train steps (finite losses) and a checkpoint; a refused one exits 2 before
 * any GPU work (nothing written) with one line naming the outside system it needs. All configs
 * run in one subprocess (`_run_examples.ts`), so compiled GPU pipelines are shared.
 */

import { assertEquals } from "../_asserts.ts";
import { readMetrics } from "../../src/monitor/metrics_log.ts";
import type { ExampleJob, ExampleResult } from "./_run_examples.ts";
import { writeTrinityTree } from "./_tree.ts";
import { ALL_VERDICTS, SMALL_RL, type Verdict } from "./verdicts.ts";

const RUNNER = new URL("./_run_examples.ts", import.meta.url).pathname;

const base = Deno.makeTempDirSync({ prefix: "rft-trinity-" });
globalThis.addEventListener("unload", () => Deno.removeSync(base, { recursive: true }));

/** The checkpoint root of config `path`'s run. */
const rootOf = (path: string) => `${base}/checkpoints/${path.replace(/[/.]/g, "_")}`;

/** The job of a verdict that runs `./rft run` on its own (not the two-process pairs). */
function jobOf(path: string, verdict: Verdict, tree: Awaited<ReturnType<typeof writeTrinityTree>>) {
  const env: Record<string, string> = {
    ...tree.env,
    TRINITY_CHECKPOINT_ROOT_DIR: rootOf(path),
  };
  const data = verdict.kind === "runs" ? verdict.data : undefined;
  if (data) env.TRINITY_TASKSET_PATH = tree.data[data];
  const sets = verdict.kind === "runs"
    ? [...(verdict.base ?? SMALL_RL), ...(verdict.sets ?? [])]
    : SMALL_RL;
  return { config: path, cwd: tree.root, env, sets };
}

/** Configs to run (all; `RFT_TRINITY_ONLY`, a regular expression, picks some while working). */
const only = new RegExp(Deno.env.get("RFT_TRINITY_ONLY") ?? "");

/** Every single-process config's result, run once for the file. */
const results: Promise<Map<string, ExampleResult>> = (async () => {
  const tree = await writeTrinityTree(base);
  const jobs: ExampleJob[] = Object.entries(ALL_VERDICTS)
    .filter(([path, v]) => v.kind !== "two_processes" && only.test(path))
    .map(([path, v]) => jobOf(path, v, tree));
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", RUNNER],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify(jobs)));
  await writer.close();
  const { stdout } = await child.output();
  const text = new TextDecoder().decode(stdout);
  const dump = Deno.env.get("RFT_TRINITY_RESULTS");
  if (dump) await Deno.writeTextFile(dump, text);
  const lines = text.split("\n").filter((l) => l.startsWith("{"));
  return new Map(lines.map((l) => JSON.parse(l) as ExampleResult).map((r) => [r.config, r]));
})();

/** The metrics.jsonl files under `dir`. */
async function metricsFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...await metricsFiles(path));
    else if (entry.name === "metrics.jsonl") found.push(path);
  }
  return found;
}

async function assertRuns(path: string, result: ExampleResult): Promise<void> {
  assertEquals(result.code, 0, `${path} exited ${result.code}:\n${result.stderr}`);
  const files = await metricsFiles(rootOf(path));
  assertEquals(files.length, 1, `one run directory for ${path}`);
  const { rows, unreadable } = await readMetrics(files[0]);
  assertEquals(unreadable, 0);
  const train = rows.filter((r) => "actor/loss" in r);
  assertEquals(train.length >= 1, true, `train rows of ${path}: ${JSON.stringify(rows)}`);
  for (const row of train) assertEquals(Number.isFinite(row["actor/loss"]), true, path);
}

function assertRefuses(path: string, result: ExampleResult, names: string): void {
  assertEquals(result.code, 2, `${path} exited ${result.code}:\n${result.stderr}`);
  const errors = result.stderr.split("\n").filter((l) => l.startsWith("rft run: "));
  assertEquals(errors.length, 1, result.stderr);
  assertEquals(errors[0].includes(names), true, `"${names}" in: ${errors[0]}`);
  const written = Deno.statSync(base).isDirectory &&
    (() => {
      try {
        return Deno.statSync(rootOf(path)).isDirectory;
      } catch {
        return false;
      }
    })();
  assertEquals(written, false, `${path} wrote nothing`);
}

for (const [path, verdict] of Object.entries(ALL_VERDICTS)) {
  if (verdict.kind === "two_processes" || !only.test(path)) continue;
  const title = verdict.kind === "runs" ? "runs" : `refuses, naming ${verdict.system}`;
  Deno.test(`Trinity example ${path} ${title}`, async () => {
    const result = (await results).get(path)!;
    if (verdict.kind === "runs") await assertRuns(path, result);
    else assertRefuses(path, result, verdict.system);
  });
}

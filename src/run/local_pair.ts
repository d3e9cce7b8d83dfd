/**
 * A trainer and an explorer process of one run on one machine (`cluster.backend: local`, which a
 * Trinity config's queue experience buffer in mode train or explore sets): Trinity's async
 * example starts `trainer.yaml` and `explorer.yaml` side by side. The trainer starts a
 * nats-server of its own (its JetStream store under `<run>/nats/`, so a restarted trainer resumes
 * from it) and writes its URL to `<run>/nats.json`; the explorer, whose files go to
 * `<run>/explorer/`, waits for that file (either may start first) and joins as a cluster
 * explorer does. From there the two run as a cluster run does (`mode_cluster_*.ts`). The trainer
 * stops its server when the run ends, after giving the explorer time to see the run done; an
 * explorer that finds the trainer's stage already finished skips it.
 */

import { dirname, join } from "node:path";
import type { RunConfig, StageConfig } from "../config/run_config.ts";
import { beginActivity } from "../util/activity.ts";
import { InputError } from "../util/input_error.ts";
import { pathExists } from "../util/path_exists.ts";
import { writeAtomic } from "../util/write_atomic.ts";

/** The file naming the trainer's NATS server, in the trainer's run directory. */
export const PAIR_FILE = "nats.json";

/** The explorer's own run directory, inside the trainer's. */
export const EXPLORER_DIR = "explorer";

/** How long the trainer keeps its server after the run is done (explorers poll each second). */
const LINGER_MS = 3000;

/** Milliseconds between two looks at the pair file while waiting for the trainer. */
const POLL_MS = 500;

/** The contents of {@link PAIR_FILE}. */
interface PairRecord {
  url: string;
  /** The nats-server's process id. */
  pid: number;
}

/** Which side of a local pair this process is, if any. */
export type PairRole = "trainer" | "explorer";

/** The role of a run whose stages use `cluster.backend: local`; undefined without one. */
export function pairRole(config: RunConfig): PairRole | undefined {
  const local = config.stages.filter((s) => s.cluster.backend === "local");
  if (local.length === 0) return undefined;
  return local.some((s) => s.mode === "explore") ? "explorer" : "trainer";
}

/**
 * Checks before any GPU work that a local pair's stages can run: mode train or explore (mode
 * both is one process already), and for the trainer a nats-server on the PATH.
 */
export async function checkLocalPair(config: RunConfig): Promise<void> {
  for (const stage of config.stages.filter((s) => s.cluster.backend === "local")) {
    if (stage.mode !== "train" && stage.mode !== "explore") {
      throw new InputError(
        `${config.file}: stage ${stage.stageName}: cluster.backend local pairs a trainer (mode train) with an explorer (mode explore) process; expected one of them, found mode ${stage.mode}`,
      );
    }
  }
  if (pairRole(config) !== "trainer") return;
  if (await natsServerVersion() === undefined) {
    throw new InputError(
      `${config.file}: this trainer and its explorer process (a queue experience buffer in mode train) meet over a NATS server the trainer starts, and nats-server is not on the PATH: install it (apt-get install nats-server), or start one and set RFT_NATS_URL=nats://host:4222 for both processes`,
    );
  }
}

/** `nats-server --version`'s line, or undefined when it cannot run. */
async function natsServerVersion(): Promise<string | undefined> {
  try {
    const out = await new Deno.Command("nats-server", {
      args: ["--version"],
      stdout: "piped",
      stderr: "null",
    }).output();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : undefined;
  } catch {
    return undefined;
  }
}

/** The trainer side: starts the server on first use, stops it when disposed. */
export class PairServer implements AsyncDisposable {
  #child: Deno.ChildProcess | undefined;
  #url: string | undefined;

  constructor(readonly runDir: string, readonly log: (line: string) => void) {}

  /** The server's URL, starting it first when it is not running. */
  async url(): Promise<string> {
    if (this.#url) return this.#url;
    await stopStale(this.runDir);
    const portsDir = await Deno.makeTempDir({ prefix: "rft_nats_ports_" });
    try {
      this.#child = new Deno.Command("nats-server", {
        args: [
          "-js",
          "-sd",
          join(this.runDir, "nats"),
          "-a",
          "127.0.0.1",
          "-p",
          "-1",
          "--ports_file_dir",
          portsDir,
        ],
        stdout: "null",
        stderr: "null",
      }).spawn();
      this.#url = await portsFileUrl(portsDir, this.#child);
    } finally {
      await Deno.remove(portsDir, { recursive: true }).catch(() => {});
    }
    const record: PairRecord = { url: this.#url, pid: this.#child.pid };
    await writeAtomic(join(this.runDir, PAIR_FILE), JSON.stringify(record) + "\n");
    this.log(
      `local pair: NATS server at ${this.#url}; the explorer process finds it in ${PAIR_FILE}`,
    );
    return this.#url;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    const child = this.#child;
    if (!child) return;
    await Deno.remove(join(this.runDir, PAIR_FILE)).catch(() => {});
    // The explorer sees the run done within a second of the trainer marking it.
    await new Promise((resolve) => setTimeout(resolve, LINGER_MS));
    try {
      child.kill("SIGTERM");
    } catch {
      // Already gone.
    }
    await child.status;
  }
}

/**
 * Stops the server a trainer killed before it could stop it left running (named in the pair
 * file and still answering), with `nats-server --signal quit=<pid>`.
 */
async function stopStale(runDir: string): Promise<void> {
  const record = await readPairFile(runDir);
  if (!record || !await reachable(record.url)) return;
  await new Deno.Command("nats-server", {
    args: ["--signal", `quit=${record.pid}`],
    stdout: "null",
    stderr: "null",
  }).output().catch(() => {});
  for (let waited = 0; waited < 5000 && await reachable(record.url); waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Whether a server answers at `url` (nats://host:port). */
async function reachable(url: string): Promise<boolean> {
  try {
    const { hostname, port } = new URL(url.replace(/^nats:/, "http:"));
    const conn = await Deno.connect({ hostname, port: Number(port) });
    conn.close();
    return true;
  } catch {
    return false;
  }
}

async function readPairFile(runDir: string): Promise<PairRecord | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(join(runDir, PAIR_FILE)));
  } catch {
    return undefined;
  }
}

/** The URL in the ports file nats-server writes into `dir` (waits up to 10 s). */
async function portsFileUrl(dir: string, child: Deno.ChildProcess): Promise<string> {
  let exited = false;
  child.status.then(() => exited = true);
  for (let waited = 0; waited < 10_000 && !exited; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.name.endsWith(".ports")) continue;
      const text = await Deno.readTextFile(join(dir, entry.name)).catch(() => "");
      if (text) return (JSON.parse(text) as { nats: string[] }).nats[0];
    }
  }
  throw new Error(`nats-server ${exited ? "exited" : "wrote no ports file within 10 s"}`);
}

/**
 * The explorer side: the URL of the trainer's server once its pair file names a running one;
 * undefined when the trainer's `stageDone` file shows the stage finished first.
 */
export async function waitForTrainer(
  explorerRunDir: string,
  stageDone: string,
  log: (line: string) => void,
  signal: AbortSignal,
): Promise<string | undefined> {
  const trainerDir = dirname(explorerRunDir);
  using _waiting = beginActivity("waiting for this run's trainer to start");
  let told = false;
  for (;;) {
    signal.throwIfAborted();
    const record = await readPairFile(trainerDir);
    if (record && await reachable(record.url)) return record.url;
    if (await pathExists(stageDone)) return undefined;
    if (!told) {
      log(
        `local pair: waiting for this run's trainer (mode train) to start; it names its NATS server in ${
          join(trainerDir, PAIR_FILE)
        }`,
      );
      told = true;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The trainer's directory of `stage` given the explorer's run directory. */
export function trainerStageDir(explorerRunDir: string, stage: StageConfig, multi: boolean) {
  const trainerDir = dirname(explorerRunDir);
  return multi ? join(trainerDir, stage.stageName) : trainerDir;
}

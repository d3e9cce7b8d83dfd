/**
 * Bench and test helper: the processes of a cluster run of `tests/cluster/addition_grpo.yaml`
 * (the example's GRPO, cut short): `./rft run` as the trainer or an explorer, each with its run
 * under its own root, the taskset and the NATS URL set on the command line.
 */

const ROOT = new URL("..", import.meta.url).pathname;

/** The cluster config of the example. */
export const CLUSTER_CONFIG = "tests/cluster/addition_grpo.yaml";

/** The example's training problems (one JSON task per line). */
export const EXAMPLE_TASKS = `${ROOT}examples/addition/data/train.jsonl`;

/** Writes the first `count` tasks of the example to `path`. */
export async function writeExampleTasks(path: string, count: number): Promise<void> {
  const lines = (await Deno.readTextFile(EXAMPLE_TASKS)).split("\n").slice(0, count);
  await Deno.writeTextFile(path, lines.join("\n") + "\n");
}

/** `./rft run` of the cluster config as `mode` (train or explore), its run under `root`. */
export function spawnRft(
  mode: "train" | "explore",
  root: string,
  tasks: string,
  url: string,
  sets: readonly string[] = [],
): Deno.ChildProcess {
  const overrides = [
    `mode=${mode}`,
    `checkpoint_root_dir=${root}`,
    `buffer.explorer_input.taskset.path=${tasks}`,
    `cluster.url=${url}`,
    ...sets,
  ];
  return new Deno.Command(`${ROOT}rft`, {
    args: ["run", CLUSTER_CONFIG, ...overrides.flatMap((s) => ["--set", s])],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** The run directory of the cluster config under `root`. */
export function clusterRunDir(root: string): string {
  return `${root}/cluster_test/addition_grpo`;
}

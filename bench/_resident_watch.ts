/**
 * Bench helper: the resident memory of a process and its descendants (from /proc on Linux),
 * sampled while it runs, and a watchdog that kills the whole tree (each process by its id) once
 * it passes a limit, so a real-size run stops short of the machine's memory instead of meeting
 * the OOM killer.
 */

/** Ids of `root` and of its descendants, from /proc (empty where /proc is absent). */
function processTree(root: number): number[] {
  const parents = new Map<number, number[]>();
  try {
    for (const entry of Deno.readDirSync("/proc")) {
      const pid = Number(entry.name);
      if (!Number.isInteger(pid)) continue;
      try {
        // `pid (comm) state ppid ...`: comm may hold spaces, so read after its last ')'.
        const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        parents.set(ppid, [...parents.get(ppid) ?? [], pid]);
      } catch { /* the process ended meanwhile */ }
    }
  } catch {
    return [];
  }
  const tree: number[] = [];
  for (const queue = [root]; queue.length;) {
    const pid = queue.pop()!;
    tree.push(pid);
    queue.push(...parents.get(pid) ?? []);
  }
  return tree;
}

/** Resident bytes of the processes `pids` (VmRSS; 0 for those gone). */
function residentBytes(pids: readonly number[]): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      const status = Deno.readTextFileSync(`/proc/${pid}/status`);
      kb += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
    } catch { /* ended */ }
  }
  return kb * 1024;
}

/** What a watch saw: the most resident bytes sampled, and whether it stopped the run. */
export interface ResidentWatch {
  peakBytes: number;
  /** Seconds after the start at which the run passed the limit and was killed. */
  killedAtS?: number;
  stop(): void;
}

/**
 * Samples the resident memory of `child`'s process tree every `everyMs`; kills every process of
 * the tree (SIGKILL, by id) when it passes `limitBytes`.
 */
export function watchResident(
  child: Deno.ChildProcess,
  limitBytes: number,
  everyMs = 1000,
): ResidentWatch {
  const start = performance.now();
  const watch: ResidentWatch = { peakBytes: 0, stop: () => clearInterval(timer) };
  const timer = setInterval(() => {
    const tree = processTree(child.pid);
    const bytes = residentBytes(tree);
    watch.peakBytes = Math.max(watch.peakBytes, bytes);
    if (bytes <= limitBytes || watch.killedAtS !== undefined) return;
    watch.killedAtS = (performance.now() - start) / 1000;
    for (const pid of tree.reverse()) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* ended */ }
    }
  }, everyMs);
  return watch;
}

/**
 * The heartbeat: its line names the open activities and how long the innermost has run, and it
 * speaks from its own thread while the main thread is blocked (a process blocks 4 s with a
 * 1-second quiet limit and its stderr shows heartbeat lines inside the block), but not while no
 * work is under way (an idle stretch before it stays quiet).
 */

import { assertEquals } from "../_asserts.ts";
import { heartbeatLine } from "../../src/monitor/heartbeat.ts";

Deno.test("the heartbeat line names the activities and the time of the innermost", () => {
  assertEquals(
    heartbeatLine(
      { text: 'stage sft: compiling kernels of graph "train" 34/120', started: 0 },
      22_400,
    ),
    '... stage sft: compiling kernels of graph "train" 34/120 (22s)',
  );
});

Deno.test("the heartbeat speaks while the main thread is blocked", async () => {
  const dir = await Deno.makeTempDir();
  const src = new URL("../../src/", import.meta.url).href;
  const script = `${dir}/blocked.ts`;
  await Deno.writeTextFile(
    script,
    `import { startHeartbeat } from "${src}monitor/heartbeat.ts";
import { beginActivity } from "${src}util/activity.ts";
import { printLine } from "${src}util/status_lines.ts";
const heartbeat = startHeartbeat(1);
await new Promise((r) => setTimeout(r, 300)); // the worker starts
printLine("idle");
const idle = Date.now() + 2500;
while (Date.now() < idle) { /* no activity open: no heartbeat */ }
printLine("before");
const compiling = beginActivity("compiling kernels of graph \\"g\\"", 10);
compiling.progress(3);
const end = Date.now() + 4000;
while (Date.now() < end) { /* a synchronous compile */ }
printLine("after");
heartbeat.stop();
`,
  );
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", script],
      stderr: "piped",
      stdout: "null",
    }).output();
    const lines = new TextDecoder().decode(out.stderr).trimEnd().split("\n");
    assertEquals(out.code, 0, lines.join("\n"));
    const [idle, before, after] = ["idle", "before", "after"].map((l) => lines.indexOf(l));
    assertEquals(before, idle + 1, `no heartbeat without an activity:\n${lines.join("\n")}`);
    const beats = lines.slice(before + 1, after);
    assertEquals(beats.length >= 2, true, lines.join("\n"));
    for (const beat of beats) {
      assertEquals(/^\.\.\. compiling kernels of graph "g" 3\/10 \(\ds\)$/.test(beat), true, beat);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * Every command of README.md and examples/**\/README.md, run as written, in order, from a fresh
 * clone's layout (the repository's tracked files copied to a temporary directory): each shell
 * block (```sh, ```bash, ```shell, ```console with `$ ` prompts; indented in a list or not) as
 * one bash script, and each inline command of the prose (`./rft ...`, `deno ...`, `python3 ...`,
 * `npm ...`, `apt-get ...`, ...). Runs that train are shrunk by the clone's `./rft`, a wrapper
 * that appends `--set` overrides to `./rft run` (one step per stage, small batches, one
 * evaluation per stage), stops `./rft serve` with a Ctrl-C after a minute (a server that
 * started then exits 0) and hands everything else to the real launcher unchanged; a command
 * that runs past 15 minutes fails as hung. Later commands (export, generate, plots, the
 * curriculum comparison) then read what the shrunk runs wrote. Templates (a placeholder in
 * capitals such as DIR, `...`, `[options]`) are not commands, and the few commands that cannot
 * run in a test are listed below with why; each listed one must still appear in a README, so the
 * list cannot go stale.
 */

import { assertEquals } from "../_asserts.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Commands that cannot run in a test, as they appear, with the reason. */
const NOT_RUN: Record<string, string> = {
  "./rft test": "the test suite itself (CI runs it)",
  "deno test": "the test suite itself, and the prose says it stops without -P",
  "deno test -P": "the test suite itself (CI runs it through ./rft test)",
  "deno run -P": "a fragment: how the launcher starts the CLI (./rft commands run it)",
  "deno compile": "needs Deno's runtime from the network (deno task compile)",
  "apt-get install nats-server": "a system package (.ci/run installs it)",
  "kill -9": "a fragment: how the resumed run was killed",
  "./rft deno task bench": "the benchmark suite: benchmarks run from bench/, never from tests",
  "apt-get install mesa-vulkan-drivers": "a system package (.ci/run installs it)",
  "nats-server -js -sd /var/lib/nats -a 0.0.0.0 -p 4222":
    "a server that runs until stopped (tests/cluster/ start their own)",
};

/** `--set` overrides that shrink a training run (every stage). */
const SHRINK = [
  "buffer.total_steps=1",
  "buffer.batch_size=4",
  "buffer.train_batch_size=8",
  "algorithm.repeat_times=2",
  "explorer.eval_on_startup=false",
  "explorer.eval_interval=0",
  "trainer.save_interval=1",
];

/** Seconds a README's `./rft serve` runs before the test's Ctrl-C (it must have started). */
const SERVE_SECONDS = 60;

/** Most minutes one README command may take, shrunk, before it counts as hung. */
const COMMAND_MINUTES = 15;

/** One command (a line, or a block run as one script) of a README. */
interface Command {
  file: string;
  line: number;
  script: string;
}

/** Words that begin a command in an inline code span. */
const COMMAND_WORDS = [
  "./rft",
  "deno",
  "python3",
  "python",
  "node",
  "npm",
  "npx",
  "apt-get",
  "nats-server",
  "bash",
  "sh",
  "curl",
  "git",
  "kill",
  "tensorboard",
];

const INLINE_COMMAND = new RegExp(
  `\`((?:${COMMAND_WORDS.map((w) => w.replace(/[./]/g, "\\$&")).join("|")})(?: [^\`]*)?)\``,
  "g",
);

/**
 * The shell blocks and inline command spans of `markdown`, in order. A block's lines lose the
 * fence's indentation (a block inside a list item); of a console block (output after `$ `
 * prompts), only the prompted lines count, without the prompt.
 */
export function readmeCommands(file: string, markdown: string): Command[] {
  const commands: Command[] = [];
  const lines = markdown.split("\n");
  let block: { start: number; indent: number; console: boolean; lines: string[] } | undefined;
  lines.forEach((text, i) => {
    if (block) {
      if (/^\s*```/.test(text)) {
        commands.push({ file, line: block.start, script: block.lines.join("\n") });
        block = undefined;
      } else {
        const line = text.slice(block.indent);
        if (!block.console) block.lines.push(line);
        else if (line.startsWith("$ ")) block.lines.push(line.slice(2));
      }
      return;
    }
    const fence = /^(\s*)```(sh|bash|shell|zsh|console|shell-session)\s*$/.exec(text);
    if (fence) {
      const console = fence[2] === "console" || fence[2] === "shell-session";
      block = { start: i + 1, indent: fence[1].length, console, lines: [] };
      return;
    }
    for (const [, span] of text.matchAll(INLINE_COMMAND)) {
      commands.push({ file, line: i + 1, script: span });
    }
  });
  return commands;
}

/** A script line's command without its comment, or "" for a comment or blank line. */
function commandOf(line: string): string {
  return line.replace(/(^|\s)#.*$/, "").trim();
}

/** Whether a command is a template: a placeholder in capitals, `...` or `[...]`. */
function isTemplate(command: string): boolean {
  const words = command.split(/\s+/).filter((w) => !w.startsWith("-") && !/^[A-Z_]+=/.test(w));
  const unquoted = command.replace(/'[^']*'|"[^"]*"/g, "''");
  return /\.\.\.|\[(--|[a-z ]+\])/.test(unquoted) ||
    words.some((w) => /(^|[^a-z])[A-Z]{2,}([^a-z]|$)|(^|[/:])[A-Z]([/:.]|$)/.test(w));
}

/** What to run of a command: its lines less templates and the listed ones; notes what was left. */
function runnable(command: Command, seen: Set<string>, skipped: string[]): string | undefined {
  const kept = command.script.split("\n").filter((line) => {
    const text = commandOf(line);
    if (text === "") return false;
    if (NOT_RUN[text] !== undefined) {
      seen.add(text);
      skipped.push(`${command.file}:${command.line} ${text}: ${NOT_RUN[text]}`);
      return false;
    }
    if (isTemplate(text) && !text.includes("$")) {
      skipped.push(`${command.file}:${command.line} ${text}: a template`);
      return false;
    }
    return true;
  });
  return kept.length ? kept.join("\n") : undefined;
}

/** The repository's tracked files copied to a new directory, `./rft` wrapped to shrink runs. */
async function freshClone(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "rft-readme-" });
  const listed = await new Deno.Command("git", { args: ["ls-files", "-z"], cwd: ROOT }).output();
  for (const path of new TextDecoder().decode(listed.stdout).split("\0").filter((p) => p)) {
    const target = `${dir}/${path}`;
    await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), { recursive: true });
    await Deno.copyFile(`${ROOT}${path}`, target).catch((err) => {
      if (!(err instanceof Deno.errors.NotFound)) throw err; // deleted, not yet committed
    });
  }
  await Deno.symlink(`${ROOT}node_modules`, `${dir}/node_modules`).catch(() => {});
  await Deno.rename(`${dir}/rft`, `${dir}/.rft-launcher`);
  const sets = SHRINK.map((s) => `--set ${s}`).join(" ");
  await Deno.writeTextFile(
    `${dir}/rft`,
    `#!/bin/sh\n# The README test's launcher: ./rft run, shrunk; ./rft serve, stopped; anything else as is.\n` +
      `here=$(cd "$(dirname "$0")" && pwd)\n` +
      `if [ "$1" = run ]; then exec "$here/.rft-launcher" "$@" ${sets}; fi\n` +
      `# A server runs until Ctrl-C: it gets one after ${SERVE_SECONDS} s, and then exits 0.\n` +
      `if [ "$1" = serve ]; then exec timeout --preserve-status -s INT ${SERVE_SECONDS} "$here/.rft-launcher" "$@"; fi\n` +
      `exec "$here/.rft-launcher" "$@"\n`,
  );
  await Deno.chmod(`${dir}/rft`, 0o755);
  return dir;
}

/** The README files: README.md, then every README.md under examples/, by path. */
async function readmes(): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(`${ROOT}${dir}`)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory && !["data", "model", "model_gpu"].includes(entry.name)) {
        await walk(path);
      } else if (entry.name === "README.md") found.push(path);
    }
  };
  await walk("examples");
  return [
    "README.md",
    ...found.sort((a, b) => a.split("/").length - b.split("/").length || a.localeCompare(b)),
  ];
}

Deno.test("every README command runs as written from a fresh clone (training shrunk)", async () => {
  const clone = await freshClone();
  const seen = new Set<string>();
  const skipped: string[] = [];
  const ran: string[] = [];
  try {
    for (const file of await readmes()) {
      const done = new Set<string>();
      for (const command of readmeCommands(file, await Deno.readTextFile(`${ROOT}${file}`))) {
        const script = runnable(command, seen, skipped);
        if (script === undefined || done.has(script)) continue;
        done.add(script);
        const out = await new Deno.Command("bash", {
          args: ["-e", "-c", script],
          cwd: clone,
          stdout: "piped",
          stderr: "piped",
          env: { NO_COLOR: "1" },
          signal: AbortSignal.timeout(COMMAND_MINUTES * 60_000),
        }).output();
        const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
        assertEquals(
          out.code,
          0,
          `${file}:${command.line}: ${script}\n--- output (last 3000 characters):\n${
            text.slice(-3000)
          }`,
        );
        ran.push(`${file}:${command.line} ${script.split("\n")[0]}`);
      }
    }
  } finally {
    await Deno.remove(clone, { recursive: true });
  }
  assertEquals(Object.keys(NOT_RUN).filter((c) => !seen.has(c)), [], "listed but in no README");
  assertEquals(ran.length >= 10, true, `ran:\n${ran.join("\n")}\nskipped:\n${skipped.join("\n")}`);
  console.log(`ran ${ran.length} commands; not run:\n  ${skipped.join("\n  ")}`);
});

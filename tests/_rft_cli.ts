/** Test helper: `./rft` run as a subprocess from the repository root, its output as text. */

const LAUNCHER = new URL("../rft", import.meta.url).pathname;
const ROOT = new URL("..", import.meta.url).pathname;

/** Runs `./rft ARGS` with piped (non-terminal) stdout and stderr; returns them and the code. */
export async function runRft(
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(LAUNCHER, {
    args,
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

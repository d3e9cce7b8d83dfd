import { assertEquals } from "../_asserts.ts";
import { SUITE } from "../../bench/main.ts";

/** Runs `deno run -A bench/<file> args`; exit code and stderr. */
async function runBench(file: string, args: string[]) {
  const path = new URL(`../../bench/${file}`, import.meta.url).pathname;
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", path, ...args],
    stdout: "null",
    stderr: "piped",
  }).output();
  return { code, stderr: new TextDecoder().decode(stderr) };
}

Deno.test("every bench script answers an unknown flag with one usage line and exit 2", async () => {
  for (const file of ["main.ts", ...SUITE.map((s) => s.file)]) {
    const { code, stderr } = await runBench(file, ["--no-such-flag"]);
    assertEquals(code, 2, `${file}: ${stderr}`);
    assertEquals(
      stderr,
      `bench/${file}: Unknown option '--no-such-flag'; see deno run -A bench/${file} --help\n`,
    );
  }
});

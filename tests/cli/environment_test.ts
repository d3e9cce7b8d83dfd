/**
 * The environment variables rft reads, checked when a command starts: values README documents
 * pass, misspelled or mistyped ones are one line naming the variable (and, as a subprocess,
 * exit 2 before any GPU work).
 */

import { assertEquals } from "../_asserts.ts";
import { checkEnvironment } from "../../src/cli/environment.ts";

/** The message checkEnvironment throws for `vars`, or "" when it passes. */
function problem(vars: Record<string, string>): string {
  try {
    checkEnvironment((name) => vars[name]);
    return "";
  } catch (err) {
    return (err as Error).message;
  }
}

Deno.test("environment: documented values pass, others name the variable and what it expects", () => {
  const documented: Record<string, string>[] = [
    {},
    { RFT_AUTOTUNE: "0" },
    { RFT_AUTOTUNE_SECONDS: "0" },
    { RFT_AUTOTUNE_SECONDS: "2.5" },
    { RFT_DEBUG: "2" },
    { RFT_VALIDATE: "1" },
    { DENO_WEBGPU_BACKEND: "gl" },
    { DENO_WEBGPU_BACKEND: "vulkan,gl" },
    { RFT_DEBUG: "" },
  ];
  for (const ok of documented) assertEquals(problem(ok), "", JSON.stringify(ok));
  assertEquals(
    problem({ RFT_AUTOTUNE_SECONDS: "two minutes" }),
    "RFT_AUTOTUNE_SECONDS=two minutes: expected a number of seconds >= 0",
  );
  assertEquals(
    problem({ RFT_AUTOTUNE_SECONDS: "-5" }),
    "RFT_AUTOTUNE_SECONDS=-5: expected a number of seconds >= 0",
  );
  assertEquals(problem({ RFT_AUTOTUNE: "off" }), "RFT_AUTOTUNE=off: expected 0 or 1");
  assertEquals(problem({ RFT_DEBUG: "yes" }), "RFT_DEBUG=yes: expected 0, 1 or 2");
  assertEquals(
    problem({ DENO_WEBGPU_BACKEND: "vulcan" }).startsWith(
      "DENO_WEBGPU_BACKEND=vulcan: expected one of vulkan",
    ),
    true,
  );
});

Deno.test("environment: a bad value stops ./rft with one line, exit 2", async () => {
  const out = await new Deno.Command(new URL("../../rft", import.meta.url).pathname, {
    args: ["info"],
    env: { RFT_AUTOTUNE: "no" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assertEquals([out.code, stderr], [2, "rft info: RFT_AUTOTUNE=no: expected 0 or 1\n"]);
});

import { assertEquals } from "../_asserts.ts";
import { VERSION } from "../../src/version.ts";

const LAUNCHER = new URL("../../rft", import.meta.url).pathname;

async function rft(args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(LAUNCHER, { args, env, stdout: "piped", stderr: "piped" })
    .output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

Deno.test("rft --help lists the commands and --version prints the version", async () => {
  const help = await rft(["--help"]);
  assertEquals(help.code, 0);
  assertEquals(help.stdout.includes("info "), true, help.stdout);
  assertEquals(help.stdout.includes("test "), true, help.stdout);
  const version = await rft(["--version"]);
  assertEquals(version.stdout.trim(), `rft ${VERSION}`);
});

Deno.test("an unknown command exits 2 naming the known ones", async () => {
  const result = await rft(["frobnicate"]);
  assertEquals(result.code, 2);
  assertEquals(result.stderr.includes('unknown command "frobnicate"'), true, result.stderr);
  assertEquals(result.stderr.includes("info"), true, result.stderr);
});

Deno.test("rft info prints the adapter and passes its self-check", async () => {
  const result = await rft(["info"]);
  assertEquals(result.code, 0, result.stdout + result.stderr);
  assertEquals(/^adapter\s+\S/m.test(result.stdout), true, result.stdout);
  assertEquals(/^features\s+shader-f16 (yes|no), timestamp-query/m.test(result.stdout), true);
  // The vendor by name (Mesa (65541) for the CPU adapter), the backend WebGPU picked.
  assertEquals(/^vendor\s+[A-Za-z][^\n]* \(\d+\)/m.test(result.stdout), true, result.stdout);
  assertEquals(/^backend\s+(vulkan|gl) \(picked by WebGPU/m.test(result.stdout), true);
  assertEquals(result.stdout.trim().endsWith("self-check ok"), true, result.stdout);
});

Deno.test("rft info without an adapter exits 2 with one line and a hint", async () => {
  const result = await rft(["info"], { DENO_WEBGPU_BACKEND: "dx12" });
  assertEquals(result.code, 2, result.stdout + result.stderr);
  assertEquals(result.stderr.startsWith("rft info: No WebGPU adapter found"), true, result.stderr);
  assertEquals(result.stderr.includes("HINT: "), true, result.stderr);
  assertEquals(result.stderr.includes("mesa-vulkan-drivers"), true, result.stderr);
  assertEquals(result.stderr.trimEnd().split("\n").length, 1, result.stderr);
});

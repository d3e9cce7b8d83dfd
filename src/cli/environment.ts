/**
 * The environment variables rft reads (README's table), checked when a command starts: a value
 * rft would otherwise ignore or misread (`RFT_AUTOTUNE_SECONDS=abc`, `DENO_WEBGPU_BACKEND=vulcan`)
 * is one line naming the variable, what it expects and what it found (exit 2).
 */

import { CliError } from "./cli_error.ts";

/** wgpu's backend names that `DENO_WEBGPU_BACKEND` takes (a comma-separated list of them). */
const BACKENDS = ["vulkan", "vk", "gl", "gles", "opengl", "metal", "mtl", "dx12", "d3d12"];

/** Each checked variable: what it expects, and whether a (non-empty) value is one of those. */
const VARIABLES: Record<string, { expected: string; accepts(value: string): boolean }> = {
  RFT_AUTOTUNE: { expected: "0 or 1", accepts: (v) => v === "0" || v === "1" },
  RFT_AUTOTUNE_SECONDS: {
    expected: "a number of seconds >= 0",
    accepts: (v) => v.trim() !== "" && Number.isFinite(Number(v)) && Number(v) >= 0,
  },
  RFT_WEIGHT_TEXTURES_MIB: {
    expected: "a number of MiB >= 0",
    accepts: (v) => v.trim() !== "" && Number.isFinite(Number(v)) && Number(v) >= 0,
  },
  RFT_DEBUG: { expected: "0, 1 or 2", accepts: (v) => ["0", "1", "2"].includes(v) },
  RFT_VALIDATE: { expected: "0 or 1", accepts: (v) => v === "0" || v === "1" },
  DENO_WEBGPU_BACKEND: {
    expected: `one of ${BACKENDS.join(", ")} (or a comma-separated list of them)`,
    accepts: (v) => v.split(",").every((b) => BACKENDS.includes(b.trim().toLowerCase())),
  },
};

/** Throws a CliError for the first variable of `env` set to a value rft cannot use. */
export function checkEnvironment(env: (name: string) => string | undefined = Deno.env.get): void {
  for (const [name, { expected, accepts }] of Object.entries(VARIABLES)) {
    const value = env(name);
    if (value === undefined || value === "" || accepts(value)) continue;
    throw new CliError(`${name}=${value}: expected ${expected}`);
  }
}

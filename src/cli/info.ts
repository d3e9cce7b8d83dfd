/**
 * `rft info`: what WebGPU adapter rft runs on, the features and limits it uses, the kernel
 * variants autotuning chose, and a few-second self-check of kernels against the CPU.
 */

import { getGpu, NoAdapterError } from "../gpu/device.ts";
import {
  autotuneCachePath,
  autotuneChoices,
  autotuneEnabled,
  shippedChoiceCount,
} from "../gpu/autotune.ts";
import { MATMUL_EXAMPLE_SHAPES, tuneMatmulExamples } from "../ops/matmul_autotune.ts";
import { CliError } from "./cli_error.ts";
import { parseFlags } from "./parse_flags.ts";
import { vendorLabel } from "../gpu/adapter_names.ts";
import { runSelfCheck } from "./self_check.ts";

const HELP = `Usage: ./rft info [--no-self-check]

Prints the WebGPU adapter (description, vendor, fallback or not, backend), the features rft uses
(shader-f16, timestamp-query, subgroups), the limits rft requests, the kernel variants chosen for
this adapter, and runs a self-check (a matmul and a softmax against the CPU).
Exits 2 when no adapter is found. DENO_WEBGPU_BACKEND=vulkan|gl forces a backend.`;

const yesNo = (b: boolean) => (b ? "yes" : "no");

/** Runs `rft info`; returns the exit code. */
export async function infoCommand(args: string[]): Promise<number> {
  const { values } = parseFlags({
    args,
    options: { help: { type: "boolean", short: "h" }, "no-self-check": { type: "boolean" } },
  }, "info");
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  let gpu;
  try {
    gpu = await getGpu();
  } catch (err) {
    if (err instanceof NoAdapterError) throw new CliError(err.message.replace(/\n/g, " "), 2);
    throw err;
  }
  const s = gpu.summary;
  console.log(`adapter      ${s.description}`);
  console.log(
    `vendor       ${vendorLabel(s.vendor)}${s.architecture ? `, ${s.architecture}` : ""}`,
  );
  console.log(`fallback     ${yesNo(s.isFallback)}${s.isFallback ? " (CPU adapter)" : ""}`);
  console.log(
    `backend      ${s.backend} (${
      s.backendSource === "inferred"
        ? "picked by WebGPU; DENO_WEBGPU_BACKEND=vulkan|gl forces one"
        : "set by DENO_WEBGPU_BACKEND"
    })`,
  );
  console.log(
    `features     shader-f16 ${yesNo(gpu.hasF16)}, timestamp-query ${
      yesNo(gpu.hasTimestamps)
    }, subgroups ${yesNo(gpu.hasSubgroups)}`,
  );
  console.log("limits requested:");
  for (const [name, value] of Object.entries(gpu.limits)) {
    console.log(`  ${name.padEnd(36)} ${value}`);
  }
  console.log(
    `kernel choices (autotune ${
      autotuneEnabled() ? "on" : "off: RFT_AUTOTUNE=0"
    }, cache ${autotuneCachePath()}):`,
  );
  const shipped = shippedChoiceCount(gpu);
  console.log(
    `  shipped tuning table: ${
      shipped ? `${shipped} choices for this adapter` : "none for this adapter (tuned on first use)"
    }`,
  );
  for (const { shape, variant } of await tuneMatmulExamples(gpu)) {
    console.log(`  matmul ${shape.padEnd(24)} ${variant}`);
  }
  const others = autotuneChoices(gpu).length - MATMUL_EXAMPLE_SHAPES.length;
  if (others > 0) console.log(`  (${others} more known choices for this adapter)`);
  if (values["no-self-check"]) return 0;
  const report = await runSelfCheck(gpu);
  for (const line of report.lines) console.log(line);
  if (!report.ok) {
    console.log("self-check FAILED");
    return 1;
  }
  console.log("self-check ok");
  return 0;
}

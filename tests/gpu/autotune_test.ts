/**
 * The autotuner's shipped tables and its time budget: a table serves only its adapter (and, on a
 * CPU adapter, its thread count); every shipped entry is well formed; with the budget spent a
 * request gets its default at once, is not remembered, and one line says tuning stopped.
 */

import { assertEquals } from "../_asserts.ts";
import { autotune, autotuneBudgetSeconds } from "../../src/gpu/autotune.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { prepareDispatch } from "../../src/gpu/dispatch.ts";
import { tablesFor, TUNING_TABLES, type TuningTable } from "../../src/gpu/tuning_tables.ts";
import { matmulShapes } from "../../src/ops/matmul.ts";
import { matmulLaunch, matmulVariant } from "../../src/ops/matmul_variants.ts";
import { setLineSink } from "../../src/util/status_lines.ts";

const table = (adapter: string, cpuThreads?: number): TuningTable => ({
  version: 1,
  adapter,
  cpuThreads,
  source: "test",
  entries: {},
});

Deno.test("tuning tables: a table serves its own adapter, and a CPU adapter's only at its thread count", () => {
  const tables = [
    table("65541/llvmpipe/vulkan", 2),
    table("65541/llvmpipe/gl", 2),
    table("4318/H100/vulkan"),
  ];
  assertEquals(tablesFor("65541/llvmpipe/vulkan", true, 2, tables), [tables[0]]);
  assertEquals(tablesFor("65541/llvmpipe/vulkan", true, 8, tables), []);
  assertEquals(tablesFor("65541/llvmpipe/gl", true, 2, tables), [tables[1]]);
  assertEquals(tablesFor("4318/H100/vulkan", false, 64, tables), [tables[2]]);
  assertEquals(tablesFor("4318/H200/vulkan", false, 64, tables), []);
});

Deno.test("tuning tables: every shipped entry belongs to its table's adapter and chose a candidate", () => {
  assertEquals(TUNING_TABLES.length >= 3, true);
  for (const t of TUNING_TABLES) {
    const entries = Object.entries(t.entries);
    assertEquals(entries.length > 0, true, `${t.adapter} has entries`);
    for (const [key, entry] of entries) {
      assertEquals(key, `${t.adapter}|${entry.op}|${entry.shapeClass}`);
      assertEquals(entry.adapter, t.adapter);
      assertEquals(entry.candidates?.includes(entry.choice), true, key);
      assertEquals(Object.keys(entry.micros).includes(entry.choice), true, key);
    }
  }
});

Deno.test("autotune budget: once spent, a new shape gets its default, unremembered, and one line says so", async () => {
  const gpu = await getGpu();
  const dir = await Deno.makeTempDir();
  const p = matmulShapes([8, 8], [8, 8]);
  const buffers = [0, 1, 2].map(() =>
    gpu.device.createBuffer({ size: 256, usage: GPUBufferUsage.STORAGE })
  );
  const ctx = {
    gpu,
    texture: (): never => {
      throw new Error("no textures here");
    },
    variableTexture: (): never => {
      throw new Error("no textures here");
    },
    inputTexture: (): never => {
      throw new Error("no textures here");
    },
  };
  const [launch] = matmulLaunch(
    ctx,
    matmulVariant("regblock_32x16"),
    p,
    buffers[0],
    buffers[1],
    buffers[2],
  );
  let prepared = 0;
  const candidate = (name: string) => ({
    name,
    prepare: async () => {
      prepared++;
      return [
        await prepareDispatch(gpu, launch.spec, launch.buffers, launch.params, launch.workgroups),
      ];
    },
  });
  const lines: string[] = [];
  const previous = setLineSink({
    write: (t) => lines.push(t),
    isTerminal: false,
    columns: () => 80,
  });
  Deno.env.set("RFT_AUTOTUNE_SECONDS", "0");
  try {
    assertEquals(autotuneBudgetSeconds(), 0);
    const request = {
      op: "budget-test",
      shapeClass: crypto.randomUUID(),
      candidates: [candidate("x"), candidate("y")],
      fallback: "y",
      cacheFile: `${dir}/autotune.json`,
    };
    assertEquals(await autotune(gpu, request), "y");
    assertEquals(await autotune(gpu, { ...request, shapeClass: crypto.randomUUID() }), "y");
    assertEquals(prepared, 0, "nothing compiled");
    const stops = lines.filter((l) => l.startsWith("kernel tuning stopped at its budget of 0 s"));
    assertEquals(stops.length, 1, lines.join(""));
    assertEquals(await Deno.stat(request.cacheFile).catch(() => undefined), undefined);
  } finally {
    Deno.env.delete("RFT_AUTOTUNE_SECONDS");
    setLineSink(previous);
    buffers.forEach((b) => b.destroy());
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("autotune: a cache written before the backend was inferred (.../default) still serves", async () => {
  const gpu = await getGpu();
  if (gpu.summary.backendSource !== "inferred") return; // DENO_WEBGPU_BACKEND set: no legacy key
  const dir = await Deno.makeTempDir();
  const shapeClass = crypto.randomUUID();
  const adapter = `${gpu.summary.vendor}/${gpu.summary.description}/default`;
  const entry = {
    adapter,
    op: "legacy-test",
    shapeClass,
    choice: "y",
    micros: { x: 2, y: 1 },
    candidates: ["x", "y"],
    at: "2026-11-25T00:00:00.000Z",
  };
  const cacheFile = `${dir}/autotune.json`;
  await Deno.writeTextFile(
    cacheFile,
    JSON.stringify({ version: 1, entries: { [`${adapter}|legacy-test|${shapeClass}`]: entry } }),
  );
  const never = (name: string) => ({
    name,
    prepare: (): never => {
      throw new Error("timed again");
    },
  });
  try {
    const request = { op: "legacy-test", shapeClass, candidates: [never("x"), never("y")] };
    assertEquals(await autotune(gpu, { ...request, fallback: "x", cacheFile }), "y");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * The WebGPU device rft runs on: one adapter, one device with the adapter's real limits and the
 * optional features rft uses. Knows nothing of kernels or models.
 */

import { VariableTextures } from "./variable_textures.ts";
import { BufferPool } from "./buffer_pool.ts";
import { SharedSlots } from "./shared_slots.ts";
import { MemoryLedger } from "./memory_ledger.ts";
import { type BackendChoice, pickedBackend } from "./adapter_names.ts";
import { SUBGROUPS, subgroupsWork } from "./subgroups.ts";

/**
 * Optional features rft asks for when the adapter lists them; `subgroups` is asked for even when
 * it does not (see `subgroups.ts`), and used only where a probe kernel shows it works.
 */
export const WANTED_FEATURES: readonly GPUFeatureName[] = ["shader-f16", "timestamp-query"];

/** Limits rft raises from the WebGPU defaults to the adapter's values. */
export const RAISED_LIMITS = [
  "maxStorageBufferBindingSize",
  "maxBufferSize",
  "maxComputeWorkgroupStorageSize",
  "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupSizeX",
  "maxComputeWorkgroupSizeY",
  "maxComputeWorkgroupSizeZ",
  "maxComputeWorkgroupsPerDimension",
  "maxStorageBuffersPerShaderStage",
  "maxStorageTexturesPerShaderStage",
] as const;

/** Thrown when WebGPU offers no adapter; the message carries a hint on what to install. */
export class NoAdapterError extends Error {
  constructor(detail: string) {
    super(
      `No WebGPU adapter found: ${detail}\n` +
        "HINT: on Linux without a GPU install Mesa's CPU drivers (apt-get install mesa-vulkan-drivers);" +
        " with an NVIDIA GPU install libvulkan1 and the NVIDIA Vulkan ICD;" +
        " DENO_WEBGPU_BACKEND=vulkan|gl forces a backend.",
    );
    this.name = "NoAdapterError";
  }
}

/** What rft knows about the adapter it runs on. */
export interface AdapterSummary {
  description: string;
  vendor: string;
  architecture: string;
  isFallback: boolean;
  /** The backend wgpu picked: `DENO_WEBGPU_BACKEND`, else inferred (`adapter_names.ts`). */
  backend: string;
  /** Whether `backend` was set by `DENO_WEBGPU_BACKEND` or inferred. */
  backendSource: BackendChoice["source"];
  features: string[];
  /** The subgroup sizes the adapter reports ([0, 0] when it reports none). */
  subgroupSizes: [number, number];
}

/** A device plus what rft learned about its adapter. */
export interface GpuContext {
  adapter: GPUAdapter;
  device: GPUDevice;
  summary: AdapterSummary;
  /** Limits requested from the adapter (the raised ones). */
  limits: Record<string, number>;
  hasF16: boolean;
  hasTimestamps: boolean;
  /** The device has `subgroups` and a probe kernel's subgroup sums and shuffles came out right. */
  hasSubgroups: boolean;
  /**
   * Whether WGSL may read storage textures (`texture_storage_2d<rgba32float, read>`, the language
   * feature `readonly_and_readwrite_storage_textures`), as the texture kernels do.
   */
  readsStorageTextures: boolean;
  /** Reusable storage buffers of this device. */
  pool: BufferPool;
  /** The buffers of the graphs' intermediate results, shared by the graphs (from `pool`). */
  sharedSlots: SharedSlots;
  /** Textures holding copies of variables, shared by the launches that read them. */
  variableTextures: VariableTextures;
  /** Every buffer and texture the device holds (the memory report's source). */
  memory: MemoryLedger;
}

let shared: Promise<GpuContext> | undefined;

/** Returns the process-wide GPU context, creating it on first call. */
export function getGpu(): Promise<GpuContext> {
  shared ??= createGpu().catch((err) => {
    shared = undefined;
    throw err;
  });
  return shared;
}

/** A limit rft raises to the adapter's value. */
export type RaisedLimit = typeof RAISED_LIMITS[number];

/** Options of {@link createGpu}. */
export interface CreateGpuOptions {
  /**
   * Lower caps on raised limits (e.g. a test's smaller `maxStorageBufferBindingSize`); a device
   * never gets less than WebGPU's default of a limit.
   */
  limits?: Partial<Record<RaisedLimit, number>>;
}

/** The WGSL language features of this runtime (Deno's types do not declare the set yet). */
function wgslLanguageFeatures(): ReadonlySet<string> {
  const gpu = navigator.gpu as unknown as { wgslLanguageFeatures?: ReadonlySet<string> };
  return gpu.wgslLanguageFeatures ?? new Set();
}

/** Creates a new GPU context (most code wants the shared one from {@link getGpu}). */
export async function createGpu(options: CreateGpuOptions = {}): Promise<GpuContext> {
  if (!("gpu" in navigator) || !navigator.gpu) {
    throw new NoAdapterError("navigator.gpu is missing in this runtime");
  }
  const adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!adapter) throw new NoAdapterError("navigator.gpu.requestAdapter() returned null");

  const requiredFeatures = WANTED_FEATURES.filter((f) => adapter.features.has(f));
  const limits: Record<string, number> = {};
  for (const name of RAISED_LIMITS) {
    const value = (adapter.limits as unknown as Record<string, number>)[name];
    if (typeof value === "number") limits[name] = Math.min(value, options.limits?.[name] ?? value);
  }
  const device = await requestDevice(adapter, requiredFeatures, limits);
  const memory = new MemoryLedger(device);
  const pool = new BufferPool(device);
  device.addEventListener("uncapturederror", (event) => {
    console.error(
      `rft: uncaptured WebGPU error: ${(event as GPUUncapturedErrorEvent).error.message}`,
    );
  });

  const info = adapter.info;
  const backend = pickedBackend(adapter.features);
  const sizes = info as unknown as { subgroupMinSize?: number; subgroupMaxSize?: number };
  const subgroupSizes: [number, number] = [sizes.subgroupMinSize ?? 0, sizes.subgroupMaxSize ?? 0];
  return {
    adapter,
    device,
    summary: {
      description: info.description || "(no description)",
      vendor: info.vendor || "(unknown vendor)",
      architecture: info.architecture || "",
      isFallback: Boolean((info as unknown as { isFallbackAdapter?: boolean }).isFallbackAdapter),
      backend: backend.backend,
      backendSource: backend.source,
      features: [...adapter.features].sort(),
      subgroupSizes,
    },
    limits,
    hasF16: device.features.has("shader-f16"),
    hasTimestamps: device.features.has("timestamp-query"),
    hasSubgroups: await subgroupsWork(device, ...subgroupSizes),
    readsStorageTextures: wgslLanguageFeatures().has("readonly_and_readwrite_storage_textures"),
    pool,
    sharedSlots: new SharedSlots(pool),
    variableTextures: new VariableTextures(device),
    memory,
  };
}

/**
 * A device with `required` features and `subgroups` when the adapter grants it (Deno's GL
 * backend refuses features the adapter does not list), else with `required` alone.
 */
async function requestDevice(
  adapter: GPUAdapter,
  required: GPUFeatureName[],
  requiredLimits: Record<string, number>,
): Promise<GPUDevice> {
  try {
    return await adapter.requestDevice({
      requiredFeatures: [...required, SUBGROUPS],
      requiredLimits,
    });
  } catch {
    return await adapter.requestDevice({ requiredFeatures: required, requiredLimits });
  }
}

/** A short key naming the adapter, used to cache autotune results per adapter. */
export function adapterKey(gpu: GpuContext): string {
  return `${gpu.summary.vendor}/${gpu.summary.description}/${gpu.summary.backend}`;
}

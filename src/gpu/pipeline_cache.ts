/**
 * Compiles and caches compute pipelines by kernel key. Compilation happens inside a validation
 * error scope and checks the shader's compilation messages, so a WGSL mistake becomes a
 * `KernelCompileError` naming the kernel, the file and the line. The shader's uniform params
 * struct is parsed here, once per pipeline, for `prepareDispatch` to check packed params against.
 */

import type { GpuContext } from "./device.ts";
import { type ParamsStruct, parseParamsStruct } from "./kernel_params.ts";
import { type BindingKind, kernelKey, type KernelSpec } from "./kernel_spec.ts";
import { shaderLocation, shaderSource } from "./shader_source.ts";

/** A WGSL kernel failed to compile or its pipeline failed validation. */
export class KernelCompileError extends Error {
  constructor(
    readonly kernel: string,
    /** `shaders/<file>.wgsl`, or `shaders/<file>.wgsl:<line>` when the line is known. */
    readonly where: string,
    /** The compiler's or validator's message. */
    readonly detail: string,
  ) {
    super(`Cannot compile kernel "${kernel}" (${where}): ${detail.trim()}`);
    this.name = "KernelCompileError";
  }
}

/** A compiled pipeline with the layout its bind groups must use. */
export interface CompiledKernel {
  key: string;
  pipeline: GPUComputePipeline;
  layout: GPUBindGroupLayout;
  spec: KernelSpec;
  /** The shader's uniform params struct (present exactly when `spec.params` is true). */
  params?: ParamsStruct;
}

interface DeviceCaches {
  modules: Map<string, Promise<GPUShaderModule>>;
  kernels: Map<string, Promise<CompiledKernel>>;
}

/** The bind group layout's buffer type of each buffer binding kind. */
const BUFFER_BINDING_TYPES: Record<
  Exclude<BindingKind, "texture" | "storage_texture">,
  GPUBufferBindingType
> = {
  read: "read-only-storage",
  read_write: "storage",
  uniform: "uniform",
};

const perDevice = new WeakMap<GPUDevice, DeviceCaches>();

function cachesFor(device: GPUDevice): DeviceCaches {
  let caches = perDevice.get(device);
  if (!caches) {
    caches = { modules: new Map(), kernels: new Map() };
    perDevice.set(device, caches);
  }
  return caches;
}

/** Returns the compiled pipeline for `spec`, compiling it on first use. */
export function getKernel(gpu: GpuContext, spec: KernelSpec): Promise<CompiledKernel> {
  const caches = cachesFor(gpu.device);
  const key = kernelKey(spec);
  let kernel = caches.kernels.get(key);
  if (!kernel) {
    kernel = compileKernel(gpu, spec, key, caches);
    caches.kernels.set(key, kernel);
    kernel.catch(() => caches.kernels.delete(key));
  }
  return kernel;
}

function shaderModule(
  gpu: GpuContext,
  stem: string,
  caches: DeviceCaches,
): Promise<GPUShaderModule> {
  let module = caches.modules.get(stem);
  if (!module) {
    module = (async () => {
      const code = shaderSource(stem);
      gpu.device.pushErrorScope("validation");
      const mod = gpu.device.createShaderModule({ label: stem, code });
      const [info] = await Promise.all([mod.getCompilationInfo(), gpu.device.popErrorScope()]);
      const error = info.messages.find((m) => m.type === "error");
      if (error) {
        throw new KernelCompileError(stem, shaderLocation(stem, error.lineNum), error.message);
      }
      return mod;
    })();
    caches.modules.set(stem, module);
    module.catch(() => caches.modules.delete(stem));
  }
  return module;
}

async function compileKernel(
  gpu: GpuContext,
  spec: KernelSpec,
  key: string,
  caches: DeviceCaches,
): Promise<CompiledKernel> {
  const { device } = gpu;
  let module: GPUShaderModule;
  try {
    module = await shaderModule(gpu, spec.shader, caches);
  } catch (err) {
    if (err instanceof KernelCompileError) {
      throw new KernelCompileError(key, err.where, err.detail);
    }
    throw err;
  }
  const params = paramsStructOf(spec, key);
  device.pushErrorScope("validation");
  const entries: GPUBindGroupLayoutEntry[] = spec.bindings.map((kind, binding) => ({
    binding,
    visibility: GPUShaderStage.COMPUTE,
    ...(kind === "texture"
      ? { storageTexture: { access: "read-only", format: "rgba32float" } }
      : kind === "storage_texture"
      ? { storageTexture: { access: "write-only", format: "rgba32float" } }
      : { buffer: { type: BUFFER_BINDING_TYPES[kind] } }),
  }));
  if (spec.params) {
    entries.push({
      binding: spec.bindings.length,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type: "uniform" },
    });
  }
  const layout = device.createBindGroupLayout({ label: key, entries });
  const pipeline = device.createComputePipeline({
    label: key,
    layout: device.createPipelineLayout({ label: key, bindGroupLayouts: [layout] }),
    compute: { module, entryPoint: spec.entryPoint, constants: { ...spec.constants } },
  });
  const error = await device.popErrorScope();
  if (error) {
    const line = /wgsl:(\d+):\d+/.exec(error.message)?.[1];
    const where = line ? shaderLocation(spec.shader, Number(line)) : `shaders/${spec.shader}.wgsl`;
    throw new KernelCompileError(key, where, error.message);
  }
  return { key, pipeline, layout, spec, params };
}

/**
 * The params struct of `spec`'s shader (after `#include` expansion); throws a
 * `KernelCompileError` when it cannot be read or when the shader has a uniform and `spec` does
 * not say so, or the other way round.
 */
function paramsStructOf(spec: KernelSpec, key: string): ParamsStruct | undefined {
  const file = `shaders/${spec.shader}.wgsl`;
  let struct: ParamsStruct | undefined;
  try {
    struct = parseParamsStruct(shaderSource(spec.shader), spec.bindings.length);
  } catch (err) {
    throw new KernelCompileError(key, file, `cannot read its params: ${(err as Error).message}`);
  }
  if (spec.params !== (struct !== undefined)) {
    throw new KernelCompileError(
      key,
      file,
      spec.params
        ? "the spec says the kernel takes params, but the shader binds no var<uniform>"
        : `the shader binds struct ${struct?.name} as var<uniform>, but the spec says no params`,
    );
  }
  return struct;
}

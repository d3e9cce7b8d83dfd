/**
 * A kernel as the runtime sees it: which WGSL file and entry point, which `override` constants,
 * and the bindings it takes. The readable key built from these is both the pipeline-cache key
 * and the GPU object label, so validation errors name the kernel.
 *
 * Binding convention for every rft kernel: group 0, bindings 0..n-1 in the order of `bindings`
 * (storage buffers, uniform buffers, sampled or storage textures), then (when `params` is true) one uniform
 * struct at n.
 */

/** How a kernel accesses a storage binding. */
export type BindingAccess = "read" | "read_write";

/**
 * What a binding is: a storage buffer with its access; `"uniform"`, a tensor's buffer read as a
 * `var<uniform>` (a few scalars every invocation reads, e.g. a learning rate the host writes or a
 * clip scale an earlier kernel computed: CPU adapters load a uniform value once, a storage value
 * once per lane); `"texture"`, a `texture_storage_2d<rgba32float, read>` read with `textureLoad`
 * (llvmpipe loads such texels ~1.6x as fast as a sampled `texture_2d<f32>`'s); or
 * `"storage_texture"`, a `texture_storage_2d<rgba32float, write>` written with `textureStore`.
 */
export type BindingKind = BindingAccess | "uniform" | "texture" | "storage_texture";

/** Everything needed to build (and cache) one compute pipeline. */
export interface KernelSpec {
  /** File stem in `shaders/`. */
  shader: string;
  /** WGSL entry point. */
  entryPoint: string;
  /** Values for WGSL `override` constants. */
  constants?: Readonly<Record<string, number>>;
  /** Storage, uniform and texture bindings in binding order. */
  bindings: readonly BindingKind[];
  /** Whether a uniform params struct follows those bindings. */
  params: boolean;
}

/** Readable, unique key of a kernel spec, e.g. `matmul.main:TM=8,TN=8`. */
export function kernelKey(spec: KernelSpec): string {
  const head = spec.entryPoint === "main" ? spec.shader : `${spec.shader}.${spec.entryPoint}`;
  const constants = Object.entries(spec.constants ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  return constants ? `${head}:${constants}` : head;
}

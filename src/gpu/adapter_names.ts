/**
 * Readable names for what WebGPU reports of an adapter: the vendor behind its numeric id (PCI or
 * Khronos vendor ids, as Deno reports them, in decimal) and the backend wgpu picked, which Deno
 * does not report: `DENO_WEBGPU_BACKEND` when set, else inferred from the platform and the
 * adapter's features (wgpu's GL backend offers no `shader-f16` and the ETC2 texture compression
 * that desktop Vulkan drivers do not; on macOS it is Metal).
 */

/** Vendor ids (decimal, as `GPUAdapterInfo.vendor` reads in Deno) and their names. */
const VENDORS: Readonly<Record<string, string>> = {
  "4098": "AMD",
  "4318": "NVIDIA",
  "32902": "Intel",
  "4203": "Apple",
  "5045": "ARM",
  "20803": "Qualcomm",
  "4112": "Imagination",
  "4139": "Matrox",
  "5348": "Broadcom",
  "65541": "Mesa",
  "65540": "Mesa (VeriSilicon)",
};

/** `vendor` with its name when known: `65541` -> `Mesa (65541)`; text vendors stay as they are. */
export function vendorLabel(vendor: string): string {
  const name = VENDORS[vendor];
  return name ? `${name} (${vendor})` : vendor;
}

/** The backend of an adapter, and whether it was set (`DENO_WEBGPU_BACKEND`) or inferred. */
export interface BackendChoice {
  backend: string;
  source: "DENO_WEBGPU_BACKEND" | "inferred";
}

/** The backend wgpu picked (see the file comment). */
export function pickedBackend(
  features: Iterable<string>,
  env = Deno.env.get("DENO_WEBGPU_BACKEND"),
  os: string = Deno.build.os,
): BackendChoice {
  if (env) return { backend: env, source: "DENO_WEBGPU_BACKEND" };
  const has = (f: string) => [...features].includes(f);
  if (os === "darwin") return { backend: "metal", source: "inferred" };
  if (has("texture-compression-etc2") && !has("shader-f16")) {
    return { backend: "gl", source: "inferred" };
  }
  return { backend: os === "windows" ? "dx12 or vulkan" : "vulkan", source: "inferred" };
}

/**
 * Whether kernels may use WGSL's subgroup built-ins (`subgroupAdd`, `subgroupShuffleXor`, ...).
 * Deno 2.9's WebGPU (wgpu) never lists `subgroups` among an adapter's features, yet grants it
 * when a device asks on the Vulkan backend (lavapipe here), and its shader compiler (Naga) takes
 * the built-ins without the `enable subgroups;` directive (which it rejects as "not yet
 * supported"); the GL backend refuses the request. So rft asks, and before trusting a grant runs
 * one probe kernel whose sums and shuffles it checks.
 */

import { readBuffers } from "./readback.ts";

/** The feature name (Deno's types may not list it). */
export const SUBGROUPS = "subgroups" as GPUFeatureName;

/** Invocations of the probe's one workgroup (a multiple of every subgroup size up to 64). */
const PROBE_INVOCATIONS = 64;

/**
 * The probe: per invocation, the subgroup's size, the sum of 1 over the subgroup and the index
 * of the invocation whose value a shuffle by xor 1 brings.
 */
const PROBE_WGSL = `
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(${PROBE_INVOCATIONS})
fn main(
  @builtin(local_invocation_index) i: u32,
  @builtin(subgroup_size) size: u32,
  @builtin(subgroup_invocation_id) lane: u32,
) {
  out[3u * i] = size;
  out[3u * i + 1u] = subgroupAdd(1u);
  out[3u * i + 2u] = subgroupShuffleXor(lane, 1u);
}
`;

/**
 * Whether `device` (granted `subgroups`) runs the probe right: every invocation sees a subgroup
 * size within [minSize, maxSize], the sum over its subgroup equals that size, and a shuffle by
 * xor 1 brings the neighbouring lane's value. False (never a throw) when the probe fails to
 * compile or run.
 */
export async function subgroupsWork(
  device: GPUDevice,
  minSize: number,
  maxSize: number,
): Promise<boolean> {
  if (!device.features.has(SUBGROUPS)) return false;
  device.pushErrorScope("validation");
  const out = device.createBuffer({
    label: "subgroup-probe",
    size: 3 * 4 * PROBE_INVOCATIONS,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
  });
  try {
    const module = device.createShaderModule({ label: "subgroup-probe", code: PROBE_WGSL });
    const pipeline = device.createComputePipeline({
      label: "subgroup-probe",
      layout: "auto",
      compute: { module, entryPoint: "main" },
    });
    const bindGroup = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [{ binding: 0, resource: { buffer: out } }],
    });
    if (await device.popErrorScope()) return false;
    const encoder = device.createCommandEncoder({ label: "subgroup-probe" });
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(1);
    pass.end();
    device.queue.submit([encoder.finish()]);
    const [bytes] = await readBuffers(device, [{ buffer: out, bytes: 3 * 4 * PROBE_INVOCATIONS }]);
    return probeHolds(new Uint32Array(bytes), minSize, maxSize);
  } catch {
    return false;
  } finally {
    out.destroy();
  }
}

/** Whether the probe's output (3 values per invocation) is what working subgroups give. */
export function probeHolds(values: Uint32Array, minSize: number, maxSize: number): boolean {
  for (let i = 0; i < values.length / 3; i++) {
    const [size, sum, shuffled] = values.subarray(3 * i, 3 * i + 3);
    if (size < Math.max(1, minSize) || size > maxSize || sum !== size) return false;
    // Lanes are numbered within the subgroup: lane = i mod size when subgroups are contiguous;
    // xor 1 pairs lanes 2j and 2j + 1 whatever the numbering.
    if (size > 1 && (shuffled ^ 1) !== i % size) return false;
  }
  return values.length > 0;
}

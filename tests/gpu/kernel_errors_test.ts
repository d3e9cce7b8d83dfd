import { assertRejects } from "../_asserts.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { getKernel, KernelCompileError } from "../../src/gpu/pipeline_cache.ts";
import { defineShaderSource } from "../../src/gpu/shader_source.ts";

const BROKEN = `// a kernel with a typo on line 5
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(1)
fn main() {
  x[0] = undefined_name + 1.0;
}
`;

Deno.test("a bad WGSL kernel fails with the kernel key and WGSL line", async () => {
  const gpu = await getGpu();
  defineShaderSource("test_broken", BROKEN);
  await assertRejects(
    () =>
      getKernel(gpu, {
        shader: "test_broken",
        entryPoint: "main",
        constants: { TM: 4 },
        bindings: ["read_write"],
        params: false,
      }),
    KernelCompileError,
    'Cannot compile kernel "test_broken:TM=4" (shaders/test_broken.wgsl:5)',
  );
});

Deno.test("an unknown override constant fails naming the kernel", async () => {
  const gpu = await getGpu();
  await assertRejects(
    () =>
      getKernel(gpu, {
        shader: "unary",
        entryPoint: "forward",
        constants: { NOT_A_CONSTANT: 1 },
        bindings: ["read", "read", "read_write"],
        params: true,
      }),
    KernelCompileError,
    'Cannot compile kernel "unary.forward:NOT_A_CONSTANT=1"',
  );
});

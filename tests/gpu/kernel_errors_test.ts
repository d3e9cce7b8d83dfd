import { assertEquals, assertRejects } from "../_asserts.ts";
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

Deno.test("a compile error names the kernel once, with the compiler's message after it", async () => {
  const gpu = await getGpu();
  defineShaderSource("test_broken_once", BROKEN);
  const err = await getKernel(gpu, {
    shader: "test_broken_once",
    entryPoint: "main",
    bindings: ["read_write"],
    params: false,
  }).then(() => undefined, (e: KernelCompileError) => e);
  assertEquals(err?.message.split("Cannot compile kernel").length, 2);
  assertEquals(err?.message.includes("undefined_name"), true);
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

Deno.test("errors in a shader with an included library name the right file and line", async () => {
  const gpu = await getGpu();
  const spec = (shader: string) => ({
    shader,
    entryPoint: "main",
    bindings: [] as const,
    params: false,
  });
  defineShaderSource(
    "test_include_caller",
    `// #include workgroup_reduce
override WG: u32 = 64u;
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  let total = workgroup_reduce(1.0, lid, false) + missing_name;
}
`,
  );
  await assertRejects(
    () => getKernel(gpu, spec("test_include_caller")),
    KernelCompileError,
    "(shaders/test_include_caller.wgsl:5)",
  );
  // Without `override WG` the library's first use of WG (its line 5) is the error.
  defineShaderSource(
    "test_include_no_wg",
    `// #include workgroup_reduce
@compute @workgroup_size(1)
fn main() {
  let total = workgroup_reduce(1.0, 0u, false);
}
`,
  );
  await assertRejects(
    () => getKernel(gpu, spec("test_include_no_wg")),
    KernelCompileError,
    "(shaders/lib/workgroup_reduce.wgsl:5)",
  );
});

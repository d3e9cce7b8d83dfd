import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { encodeDispatches, prepareDispatch, releaseDispatch } from "../../src/gpu/dispatch.ts";
import {
  packParams,
  paramsMismatch,
  type ParamValue,
  parseParamsStruct,
} from "../../src/gpu/kernel_params.ts";
import type { KernelSpec } from "../../src/gpu/kernel_spec.ts";
import { KernelCompileError } from "../../src/gpu/pipeline_cache.ts";
import { readBuffers } from "../../src/gpu/readback.ts";
import { defineShaderSource } from "../../src/gpu/shader_source.ts";

// Copies its params into `out` as (tokens, vocab, scale * 2, shift), so a wrong packing shows.
const ECHO = `// a kernel that writes its params back
struct Params {
  tokens: u32,   // a comment, ignored
  vocab: u32,
  /* block comment, ignored */ scale: f32,
  shift: i32,
}
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> p: Params;
@compute @workgroup_size(1)
fn main() {
  out[0] = p.tokens;
  out[1] = p.vocab;
  out[2] = bitcast<u32>(p.scale * 2.0);
  out[3] = bitcast<u32>(p.shift);
}
`;

const ECHO_SPEC: KernelSpec = {
  shader: "test_echo_params",
  entryPoint: "main",
  bindings: ["read_write"],
  params: true,
};

async function echo(params: Readonly<Record<string, ParamValue>>): Promise<ArrayBuffer> {
  const gpu = await getGpu();
  defineShaderSource("test_echo_params", ECHO);
  const out = gpu.device.createBuffer({
    size: 16,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
  });
  try {
    const d = await prepareDispatch(gpu, ECHO_SPEC, [out], packParams(params), [1, 1, 1]);
    const encoder = gpu.device.createCommandEncoder();
    encodeDispatches(encoder, [d]);
    gpu.device.queue.submit([encoder.finish()]);
    releaseDispatch(d);
    const [bytes] = await readBuffers(gpu.device, [{ buffer: out, bytes: 16 }]);
    return bytes;
  } finally {
    out.destroy();
  }
}

Deno.test("named params in the struct's order reach the kernel as the struct reads them", async () => {
  const bytes = await echo({ tokens: 7, vocab: 49152, scale: { f32: 1.25 }, shift: { i32: -3 } });
  const words = new Uint32Array(bytes);
  assertEquals([words[0], words[1]], [7, 49152]);
  assertEquals(new Float32Array(bytes)[2], 2.5);
  assertEquals(new Int32Array(bytes)[3], -3);
});

Deno.test("swapped, missing, extra and mistyped params are rejected naming kernel, file and field", async () => {
  const where = 'Cannot prepare kernel "test_echo_params" (shaders/test_echo_params.wgsl): ';
  const scale = { f32: 1 };
  const shift = { i32: 0 };
  await assertRejects(
    () => echo({ vocab: 1, tokens: 2, scale, shift }),
    Error,
    where + 'params give field "vocab" at position 0, where struct Params declares "tokens" ' +
      "(declared order: tokens, vocab, scale, shift)",
  );
  await assertRejects(
    () => echo({ tokens: 1, scale, shift }),
    Error,
    where + 'params lack field "vocab" (u32) of struct Params',
  );
  await assertRejects(
    () => echo({ tokens: 1, vocab: 2, scale, shift, eps: { f32: 0 } }),
    Error,
    where + 'params give field "eps", which struct Params does not declare',
  );
  await assertRejects(
    () => echo({ tokens: 1, vocab: 2, scale: 1, shift }),
    Error,
    where + 'params field "scale" is packed as u32, struct Params declares f32',
  );
});

Deno.test("a spec and a shader that disagree on having params fail at compile naming both", async () => {
  const gpu = await getGpu();
  defineShaderSource(
    "test_no_params",
    `@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1)
fn main() { out[0] = 1u; }
`,
  );
  const out = gpu.device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE });
  await assertRejects(
    () =>
      prepareDispatch(
        gpu,
        { ...ECHO_SPEC, shader: "test_no_params" },
        [out],
        packParams({ n: 1 }),
        [1, 1, 1],
      ),
    KernelCompileError,
    'Cannot compile kernel "test_no_params" (shaders/test_no_params.wgsl): the spec says the ' +
      "kernel takes params, but the shader binds no var<uniform>",
  );
  out.destroy();
});

Deno.test("parseParamsStruct reads the uniform's struct and refuses what packParams cannot write", () => {
  assertEquals(parseParamsStruct(ECHO), {
    name: "Params",
    fields: [
      { name: "tokens", type: "u32" },
      { name: "vocab", type: "u32" },
      { name: "scale", type: "f32" },
      { name: "shift", type: "i32" },
    ],
  });
  assertEquals(parseParamsStruct("fn main() {}"), undefined);
  assertThrows(
    () =>
      parseParamsStruct(
        "struct P { a: u32, b: vec2<f32>, }\n@group(0) @binding(0) var<uniform> p: P;",
      ),
    Error,
    'struct P field "b: vec2<f32>" is not a plain u32, i32 or f32',
  );
  const twoUniforms = "struct Lr { lr: f32, }\nstruct P { n: u32, }\n" +
    "@group(0) @binding(0) var<uniform> lr: Lr;\n@group(0) @binding(1) var<uniform> p: P;";
  assertEquals(parseParamsStruct(twoUniforms, 1), {
    name: "P",
    fields: [{ name: "n", type: "u32" }],
  });
  assertEquals(parseParamsStruct(twoUniforms, 2), undefined);
  assertThrows(() => parseParamsStruct(twoUniforms), Error, "expected one var<uniform>, found 2");
  assertThrows(
    () => parseParamsStruct("@group(0) @binding(0) var<uniform> p: Missing;"),
    Error,
    "the uniform's struct Missing is not declared",
  );
});

Deno.test("paramsMismatch accepts the same fields and order and packParams pads to 16 bytes", () => {
  const struct = parseParamsStruct(ECHO)!;
  const packed = packParams({ tokens: 1, vocab: 2, scale: { f32: 0.5 }, shift: { i32: -1 } });
  assertEquals(paramsMismatch(struct, packed.fields), undefined);
  assertEquals(packParams({ n: 3 }).bytes.byteLength, 16);
  assertEquals(packParams({ a: 1, b: 2, c: 3, d: 4, e: 5 }).bytes.byteLength, 32);
});

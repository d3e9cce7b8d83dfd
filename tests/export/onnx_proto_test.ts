import { assertEquals, assertThrows } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { concatBytes, encodeOnnxModel, type OnnxGraph } from "../../src/export/onnx_proto.ts";
import { type ProtoField, protoFields } from "../../src/util/protobuf_reader.ts";
import { ort, wasmSession } from "./_ort_wasm.ts";

/** The fields numbered `field` of a message. */
function fieldsOf(message: Uint8Array, field: number): ProtoField[] {
  return [...protoFields(message)].filter((f) => f.field === field);
}

/** The bytes of length-delimited fields numbered `field`. */
function bytesOf(message: Uint8Array, field: number): Uint8Array[] {
  return fieldsOf(message, field).map((f) => (f.wireType === 2 ? f.bytes : new Uint8Array()));
}

/** The varint values of fields numbered `field`. */
function varintsOf(message: Uint8Array, field: number): number[] {
  return fieldsOf(message, field).map((f) => (f.wireType === 0 ? f.value : NaN));
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** y = LeakyRelu(Transpose(x) @ w + bias, alpha) with x [2, 3] input, w [2, 2], bias [2]. */
const W = new Float32Array([1, -2, 0.5, 3]);
const BIAS = new Float32Array([0.25, -1]);
const ALPHA = 0.125;
const GRAPH: OnnxGraph = {
  name: "affine",
  nodes: [
    { opType: "Transpose", inputs: ["x"], outputs: ["xt"], attributes: { perm: { ints: [1, 0] } } },
    { opType: "MatMul", inputs: ["xt", "w"], outputs: ["xw"] },
    { opType: "Add", inputs: ["xw", "bias"], outputs: ["z"] },
    { opType: "LeakyRelu", inputs: ["z"], outputs: ["y"], attributes: { alpha: { float: ALPHA } } },
  ],
  inputs: [{ name: "x", shape: [2, "n"] }],
  outputs: [{ name: "y", shape: ["n", 2] }],
  initializers: [
    { name: "w", type: "float", dims: [2, 2], data: new Uint8Array(W.buffer) },
    { name: "bias", type: "float", dims: [2], data: new Uint8Array(BIAS.buffer) },
  ],
};

/** The graph's function computed by hand: x [2, n] row-major. */
function expectedY(x: Float32Array, n: number): number[] {
  const y: number[] = [];
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < 2; j++) {
      const z = x[i] * W[j] + x[n + i] * W[2 + j] + BIAS[j];
      y.push(z >= 0 ? z : ALPHA * z);
    }
  }
  return y;
}

Deno.test("encodeOnnxModel writes ModelProto fields a protobuf reader finds", () => {
  const { model, externalData } = encodeOnnxModel(GRAPH);
  assertEquals(externalData, []);
  const bytes = concatBytes(model);
  assertEquals(varintsOf(bytes, 1), [8]); // ir_version
  assertEquals(text(bytesOf(bytes, 2)[0]), "rft"); // producer_name
  const [opset] = bytesOf(bytes, 8);
  assertEquals([text(bytesOf(opset, 1)[0]), varintsOf(opset, 2)], ["", [17]]);
  const [graph] = bytesOf(bytes, 7);
  assertEquals(text(bytesOf(graph, 2)[0]), "affine");
  const nodes = bytesOf(graph, 1);
  assertEquals(nodes.map((n) => text(bytesOf(n, 4)[0])), [
    "Transpose",
    "MatMul",
    "Add",
    "LeakyRelu",
  ]);
  const [perm] = bytesOf(nodes[0], 5);
  assertEquals([text(bytesOf(perm, 1)[0]), varintsOf(perm, 8), varintsOf(perm, 20)], [
    "perm",
    [1, 0],
    [7], // AttributeType.INTS
  ]);
  const [alpha] = bytesOf(nodes[3], 5);
  const alphaBits = fieldsOf(alpha, 2)[0];
  assertEquals(alphaBits.wireType, 5);
  if (alphaBits.wireType === 5) {
    assertEquals(new DataView(alphaBits.bytes.slice().buffer).getFloat32(0, true), ALPHA);
  }
  const [w, bias] = bytesOf(graph, 5);
  assertEquals([varintsOf(w, 1), varintsOf(w, 2), text(bytesOf(w, 8)[0])], [[2, 2], [1], "w"]);
  assertEquals(new Float32Array(bytesOf(bias, 9)[0].slice().buffer), BIAS);
  const [input] = bytesOf(graph, 11);
  const [type] = bytesOf(input, 2);
  const [tensor] = bytesOf(type, 1);
  const dims = bytesOf(bytesOf(tensor, 2)[0], 1);
  assertEquals([varintsOf(dims[0], 1), text(bytesOf(dims[1], 2)[0])], [[2], "n"]);
});

Deno.test("encodeOnnxModel places external data at the offsets its tensors name", () => {
  const { model, externalData } = encodeOnnxModel(GRAPH, {
    externalData: { location: "affine.onnx.data", include: () => true },
  });
  const data = concatBytes(externalData);
  assertEquals(data.length, W.byteLength + BIAS.byteLength);
  const [graph] = bytesOf(concatBytes(model), 7);
  for (const [tensor, values] of bytesOf(graph, 5).map((t, i) => [t, [W, BIAS][i]] as const)) {
    assertEquals(varintsOf(tensor, 14), [1]); // DataLocation.EXTERNAL
    assertEquals(bytesOf(tensor, 9), []); // no raw_data
    const entries = Object.fromEntries(
      bytesOf(tensor, 13).map((e) => [text(bytesOf(e, 1)[0]), text(bytesOf(e, 2)[0])]),
    );
    assertEquals(entries.location, "affine.onnx.data");
    const at = Number(entries.offset);
    const stored = data.slice(at, at + Number(entries.length));
    assertEquals(new Float32Array(stored.buffer), values);
  }
});

Deno.test("onnxruntime-web runs encoded models, inline and with external data", async () => {
  const n = 3;
  const x = new Float32Array([0.5, -1, 2, 1.5, 0, -3]);
  for (const external of [false, true]) {
    const location = "affine.onnx.data";
    const { model, externalData } = encodeOnnxModel(GRAPH, {
      externalData: external ? { location, include: () => true } : undefined,
    });
    const session = await wasmSession(
      concatBytes(model),
      external ? { path: location, data: concatBytes(externalData) } : undefined,
    );
    const out = await session.run({ x: new ort.Tensor("float32", x, [2, n]) });
    assertEquals(out.y.dims, [n, 2]);
    assertClose(out.y.data as Float32Array, expectedY(x, n), { label: `external ${external}` });
    await session.release();
  }
});

Deno.test("encodeOnnxModel refuses an initializer whose bytes do not fit its dims", () => {
  const graph = {
    ...GRAPH,
    initializers: [{ name: "w", type: "float" as const, dims: [2, 3], data: new Uint8Array(16) }],
  };
  assertThrows(
    () => encodeOnnxModel(graph),
    Error,
    `Cannot encode ONNX initializer "w": expected 24 bytes for float [2, 3], received 16`,
  );
});

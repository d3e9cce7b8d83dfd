/**
 * The few ONNX messages rft writes by hand (ModelProto with one graph of plain nodes and float
 * tensor inputs/outputs), on the shared `ProtoWriter`. No decoder, no initializers, no
 * attributes: enough for benchmark models, small enough to read in one sitting.
 */

import { ProtoWriter } from "../src/util/protobuf_writer.ts";

/** A tensor dimension: a fixed size or a symbolic name. */
export type OnnxDim = number | string;

/** A float32 graph input or output. */
export interface OnnxValue {
  name: string;
  shape: readonly OnnxDim[];
}

/** A node of the graph: an operator applied to named values. */
export interface OnnxNode {
  opType: string;
  inputs: readonly string[];
  outputs: readonly string[];
}

/** ONNX TensorProto.DataType.FLOAT. */
const FLOAT = 1;

/** ValueInfoProto { name = 1, type = 2: TypeProto { tensor_type = 1 } }. */
function valueInfo(w: ProtoWriter, value: OnnxValue): void {
  w.string(1, value.name);
  w.message(2, (type) => type.message(1, (tensor) => tensorType(tensor, value.shape)));
}

/** TypeProto.Tensor: float elements and a TensorShapeProto of Dimension { value = 1 | param = 2 }. */
function tensorType(w: ProtoWriter, shape: readonly OnnxDim[]): void {
  w.varint(1, FLOAT);
  w.message(2, (s) => {
    for (const dim of shape) {
      s.message(1, (d) => typeof dim === "number" ? d.varint(1, dim) : d.string(2, dim));
    }
  });
}

/** Encodes a ModelProto (IR version 7, default-domain opset 17) with one graph. */
export function encodeOnnxModel(graph: {
  name: string;
  nodes: readonly OnnxNode[];
  inputs: readonly OnnxValue[];
  outputs: readonly OnnxValue[];
}): Uint8Array<ArrayBuffer> {
  return new ProtoWriter()
    .varint(1, 7) // ModelProto.ir_version
    .message(8, (op) => op.string(1, "").varint(2, 17)) // opset_import { domain, version }
    .message(7, (g) => { // ModelProto.graph: GraphProto
      for (const node of graph.nodes) {
        g.message(1, (n) => { // GraphProto.node: NodeProto
          for (const input of node.inputs) n.string(1, input);
          for (const output of node.outputs) n.string(2, output);
          n.string(4, node.opType);
        });
      }
      g.string(2, graph.name);
      for (const input of graph.inputs) g.message(11, (v) => valueInfo(v, input));
      for (const output of graph.outputs) g.message(12, (v) => valueInfo(v, output));
    })
    .finish();
}

/** A model computing `C = A @ B` with A [M, K], B [K, N] (symbolic dims unless given). */
export function matmulModel(m: OnnxDim = "M", k: OnnxDim = "K", n: OnnxDim = "N") {
  return encodeOnnxModel({
    name: "matmul",
    nodes: [{ opType: "MatMul", inputs: ["A", "B"], outputs: ["C"] }],
    inputs: [{ name: "A", shape: [m, k] }, { name: "B", shape: [k, n] }],
    outputs: [{ name: "C", shape: [m, n] }],
  });
}

/**
 * The ONNX messages rft writes (ModelProto with one graph: nodes with attributes, typed inputs
 * and outputs, initializers inline or in an external data file), on the shared `ProtoWriter`.
 * The result is a list of byte parts so weights are referenced, never copied, and a model may be
 * streamed to a file. No decoder, no subgraphs, no sparse tensors, no negative integer
 * attributes (use the positive axis).
 */

import { VERSION } from "../version.ts";
import { ProtoWriter } from "../util/protobuf_writer.ts";

/** The default-domain opset the graphs use. */
export const ONNX_OPSET = 17;
/** The IR version that goes with {@link ONNX_OPSET}. */
const IR_VERSION = 8;

/** Element types rft writes, with their TensorProto.DataType numbers. */
export const ONNX_ELEMENT_TYPE = { float: 1, int64: 7, bool: 9, float16: 10 } as const;

/** An element type name of {@link ONNX_ELEMENT_TYPE}. */
export type OnnxElementType = keyof typeof ONNX_ELEMENT_TYPE;

/** A tensor dimension: a fixed size or a symbolic name. */
export type OnnxDim = number | string;

/** A graph input or output (float unless `type` says otherwise). */
export interface OnnxValue {
  name: string;
  shape: readonly OnnxDim[];
  type?: OnnxElementType;
}

/** A node attribute value (AttributeProto of type INT, FLOAT, INTS or STRING). */
export type OnnxAttribute =
  | { int: number }
  | { float: number }
  | { ints: readonly number[] }
  | { string: string };

/** A node of the graph: an operator applied to named values. */
export interface OnnxNode {
  opType: string;
  inputs: readonly string[];
  outputs: readonly string[];
  attributes?: Readonly<Record<string, OnnxAttribute>>;
}

/** A constant tensor of the graph; `data` is its raw little-endian bytes. */
export interface OnnxInitializer {
  name: string;
  type: OnnxElementType;
  dims: readonly number[];
  data: Uint8Array;
}

/** One graph, as {@link encodeOnnxModel} takes it. */
export interface OnnxGraph {
  name: string;
  nodes: readonly OnnxNode[];
  inputs: readonly OnnxValue[];
  outputs: readonly OnnxValue[];
  initializers?: readonly OnnxInitializer[];
}

/** Where large initializers go instead of the model file. */
export interface ExternalDataOptions {
  /** The data file's path relative to the model file (TensorProto external_data "location"). */
  location: string;
  /** Which initializers are stored externally (default: those of at least 1 KiB). */
  include?: (initializer: OnnxInitializer) => boolean;
}

/** An encoded model: the parts of the model file and of its external data file, in order. */
export interface EncodedOnnx {
  model: Uint8Array[];
  /** Empty when every initializer is inline. */
  externalData: Uint8Array[];
}

/** Bytes kept as a list of parts with their total length. */
class Parts {
  readonly list: Uint8Array[] = [];
  length = 0;

  add(bytes: Uint8Array): this {
    if (bytes.length > 0) {
      this.list.push(bytes);
      this.length += bytes.length;
    }
    return this;
  }

  /** Appends `payload` as length-delimited field `field`. */
  field(field: number, payload: Parts | Uint8Array): this {
    this.add(new ProtoWriter().lengthPrefix(field, payload.length).finish());
    if (payload instanceof Uint8Array) return this.add(payload);
    for (const part of payload.list) this.add(part);
    return this;
  }
}

/**
 * ValueInfoProto { name = 1, type = 2: TypeProto { tensor_type = 1: { elem_type = 1, shape = 2:
 * TensorShapeProto { dim = 1: { dim_value = 1 | dim_param = 2 } } } } }.
 */
function valueInfo(w: ProtoWriter, value: OnnxValue): void {
  w.string(1, value.name);
  w.message(2, (type) =>
    type.message(1, (tensor) => {
      tensor.varint(1, ONNX_ELEMENT_TYPE[value.type ?? "float"]);
      tensor.message(2, (shape) => {
        for (const dim of value.shape) {
          shape.message(1, (d) => typeof dim === "number" ? d.varint(1, dim) : d.string(2, dim));
        }
      });
    }));
}

/** AttributeProto { name = 1, f = 2, i = 3, s = 4, ints = 8, type = 20 }. */
function attribute(w: ProtoWriter, name: string, value: OnnxAttribute): void {
  w.string(1, name);
  if ("int" in value) w.varint(3, value.int).varint(20, 2);
  else if ("float" in value) w.float(2, value.float).varint(20, 1);
  else if ("ints" in value) {
    for (const i of value.ints) w.varint(8, i);
    w.varint(20, 7);
  } else w.string(4, value.string).varint(20, 3);
}

/** NodeProto { input = 1, output = 2, op_type = 4, attribute = 5 }. */
function node(w: ProtoWriter, n: OnnxNode): void {
  for (const input of n.inputs) w.string(1, input);
  for (const output of n.outputs) w.string(2, output);
  w.string(4, n.opType);
  for (const [name, value] of Object.entries(n.attributes ?? {})) {
    w.message(5, (a) => attribute(a, name, value));
  }
}

/**
 * TensorProto { dims = 1, data_type = 2, name = 8, raw_data = 9, external_data = 13,
 * data_location = 14 }; external data is appended to `data` at its current end.
 */
function tensor(t: OnnxInitializer, data: Parts | undefined, location: string): Parts {
  const head = new ProtoWriter();
  for (const d of t.dims) head.varint(1, d);
  head.varint(2, ONNX_ELEMENT_TYPE[t.type]).string(8, t.name);
  if (data) {
    const entry = (key: string, value: string) =>
      head.message(13, (e) => e.string(1, key).string(2, value));
    entry("location", location);
    entry("offset", String(data.length));
    entry("length", String(t.data.length));
    head.varint(14, 1); // DataLocation.EXTERNAL
    data.add(t.data);
    return new Parts().add(head.finish());
  }
  return new Parts().add(head.finish()).field(9, t.data);
}

/** Checks that an initializer's byte count matches its dims and type. */
function checkInitializer(t: OnnxInitializer): void {
  const itemBytes = { bool: 1, float16: 2, float: 4, int64: 8 }[t.type];
  const expected = t.dims.reduce((a, b) => a * b, 1) * itemBytes;
  if (t.data.length !== expected) {
    throw new Error(
      `Cannot encode ONNX initializer "${t.name}": expected ${expected} bytes for ${t.type} [${
        t.dims.join(", ")
      }], received ${t.data.length}`,
    );
  }
}

/**
 * Encodes a ModelProto (IR version 8, default-domain opset {@link ONNX_OPSET}, producer "rft")
 * with one graph. With `externalData`, the initializers it includes go to the data parts, in
 * graph order, each at the offset its TensorProto names.
 *
 * @example
 * ```ts
 * const { model } = encodeOnnxModel({
 *   name: "square",
 *   nodes: [{ opType: "Mul", inputs: ["x", "x"], outputs: ["y"] }],
 *   inputs: [{ name: "x", shape: ["n"] }],
 *   outputs: [{ name: "y", shape: ["n"] }],
 * });
 * const bytes = concatBytes(model);
 * ```
 */
export function encodeOnnxModel(
  graph: OnnxGraph,
  options: { externalData?: ExternalDataOptions } = {},
): EncodedOnnx {
  const external = options.externalData;
  const include = external?.include ?? ((t: OnnxInitializer) => t.data.length >= 1024);
  const data = new Parts();
  const body = new Parts();
  const g = new ProtoWriter();
  for (const n of graph.nodes) g.message(1, (w) => node(w, n));
  g.string(2, graph.name);
  body.add(g.finish());
  for (const init of graph.initializers ?? []) {
    checkInitializer(init);
    const outside = external !== undefined && include(init);
    body.field(5, tensor(init, outside ? data : undefined, external?.location ?? ""));
  }
  const io = new ProtoWriter();
  for (const input of graph.inputs) io.message(11, (v) => valueInfo(v, input));
  for (const output of graph.outputs) io.message(12, (v) => valueInfo(v, output));
  body.add(io.finish());
  const model = new Parts().add(
    new ProtoWriter()
      .varint(1, IR_VERSION)
      .string(2, "rft") // producer_name
      .string(3, VERSION) // producer_version
      .message(8, (op) => op.string(1, "").varint(2, ONNX_OPSET)) // opset_import
      .finish(),
  ).field(7, body);
  return { model: model.list, externalData: data.list };
}

/** The parts joined into one buffer. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * Builds an ONNX graph value by value: each call adds one node (or constant) and returns the
 * name of its result, so model code reads like the graph it writes. Names are unique; equal
 * constants are stored once. Knows no shapes and no op semantics: ONNX checks those when a
 * runtime loads the model.
 */

import {
  ONNX_ELEMENT_TYPE,
  type OnnxAttribute,
  type OnnxElementType,
  type OnnxGraph,
  type OnnxInitializer,
  type OnnxNode,
  type OnnxValue,
} from "./onnx_proto.ts";

/** The raw bytes of a typed array (a view, not a copy). */
function bytesOf(data: Float32Array | Float16Array | BigInt64Array): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** A graph under construction; `build` returns it for `encodeOnnxModel`. */
export class OnnxGraphBuilder {
  readonly #nodes: OnnxNode[] = [];
  readonly #initializers: OnnxInitializer[] = [];
  readonly #inputs: OnnxValue[] = [];
  readonly #outputs: OnnxValue[] = [];
  readonly #names = new Set<string>();
  readonly #constants = new Map<string, string>();
  #counter = 0;

  /** Declares a graph input; returns its name. */
  input(name: string, shape: OnnxValue["shape"], type: OnnxElementType = "float"): string {
    this.#claim(name);
    this.#inputs.push({ name, shape, type });
    return name;
  }

  /** Makes `value` a graph output called `name` (through an Identity node). */
  output(value: string, name: string, shape: OnnxValue["shape"], type?: OnnxElementType): void {
    this.#claim(name);
    this.#nodes.push({ opType: "Identity", inputs: [value], outputs: [name] });
    this.#outputs.push({ name, shape, type });
  }

  /** Adds node `opType` on `inputs` with one output; returns the output's name. */
  op(opType: string, inputs: readonly string[], attributes?: Record<string, OnnxAttribute>) {
    return this.ops(opType, inputs, 1, attributes)[0];
  }

  /** Adds node `opType` with `outputs` outputs; returns their names. */
  ops(
    opType: string,
    inputs: readonly string[],
    outputs: number,
    attributes?: Record<string, OnnxAttribute>,
  ): string[] {
    const names = Array.from({ length: outputs }, () => this.#fresh(opType));
    this.#nodes.push({ opType, inputs, outputs: names, attributes });
    return names;
  }

  /**
   * Adds a float initializer called `name` (e.g. a weight by its Hugging Face name); returns the
   * value to compute with. Stored as `float16` (rounded to nearest), it is cast back to float.
   */
  weight(
    name: string,
    dims: readonly number[],
    data: Float32Array,
    storage: "float" | "float16" = "float",
  ): string {
    this.#claim(name);
    if (storage === "float") {
      this.#initializers.push({ name, type: "float", dims, data: bytesOf(data) });
      return name;
    }
    this.#initializers.push({
      name,
      type: "float16",
      dims,
      data: bytesOf(Float16Array.from(data)),
    });
    return this.op("Cast", [name], { to: { int: ONNX_ELEMENT_TYPE.float } });
  }

  /** A float constant (a scalar when `dims` is empty), stored once per distinct value. */
  floats(values: readonly number[], dims: readonly number[] = [values.length]): string {
    return this.#constant("float", dims, values, () => bytesOf(Float32Array.from(values)));
  }

  /** An int64 constant (a scalar when `dims` is empty), stored once per distinct value. */
  int64s(values: readonly number[], dims: readonly number[] = [values.length]): string {
    return this.#constant(
      "int64",
      dims,
      values,
      () => bytesOf(BigInt64Array.from(values, (v) => BigInt(v))),
    );
  }

  /** The graph built so far. */
  build(name: string): OnnxGraph {
    return {
      name,
      nodes: this.#nodes,
      inputs: this.#inputs,
      outputs: this.#outputs,
      initializers: this.#initializers,
    };
  }

  #constant(
    type: OnnxElementType,
    dims: readonly number[],
    values: readonly number[],
    bytes: () => Uint8Array,
  ): string {
    const key = `${type}[${dims.join(",")}]:${values.join(",")}`;
    let name = this.#constants.get(key);
    if (!name) {
      name = this.#fresh("const");
      this.#initializers.push({ name, type, dims, data: bytes() });
      this.#constants.set(key, name);
    }
    return name;
  }

  #fresh(prefix: string): string {
    let name: string;
    do name = `${prefix}_${this.#counter++}`; while (this.#names.has(name));
    this.#names.add(name);
    return name;
  }

  #claim(name: string): void {
    if (this.#names.has(name)) {
      throw new Error(`Cannot add ONNX value "${name}": expected a new name, received a used one`);
    }
    this.#names.add(name);
  }
}

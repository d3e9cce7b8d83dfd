/**
 * A graph under construction: inputs, variables, constants and op applications, in creation
 * order. Model code builds one per shape class; `compileGraph` turns it into an executable.
 */

import type { OpDef } from "./op.ts";
import {
  dataBytes,
  type DType,
  formatShape,
  type HostData,
  shapeSize,
  Tensor,
  type Variable,
} from "./tensor.ts";

/** A graph of tensors; op helpers in `src/ops/` add nodes to it. */
export class Graph {
  readonly nodes: Tensor[] = [];
  readonly #variables = new Map<Variable, Tensor>();

  /** A tensor whose data is supplied at every run. */
  input(shape: readonly number[], dtype: DType = "f32", name = "input"): Tensor {
    checkShape(shape, name);
    return this.#add(shape, dtype, { kind: "input" }, name);
  }

  /** A tensor bound to a long-lived GPU buffer (same tensor for the same variable). */
  variable(variable: Variable): Tensor {
    let tensor = this.#variables.get(variable);
    if (!tensor) {
      checkShape(variable.shape, variable.name);
      const need = dataBytes(variable.shape, variable.dtype);
      if (variable.buffer.size < need) {
        throw new Error(
          `Cannot bind variable "${variable.name}": buffer has ${variable.buffer.size} bytes, shape ${
            formatShape(variable.shape)
          } needs ${need}`,
        );
      }
      tensor = this.#add(
        variable.shape,
        variable.dtype,
        { kind: "variable", variable },
        variable.name,
      );
      this.#variables.set(variable, tensor);
    }
    return tensor;
  }

  /** A tensor with fixed data, uploaded once when the graph is compiled. */
  constant(
    data: HostData,
    shape: readonly number[] = [data.length],
    name = "constant",
  ): Tensor {
    checkShape(shape, name);
    if (shapeSize(shape) !== data.length) {
      throw new Error(
        `Cannot make constant "${name}": shape ${formatShape(shape)} needs ${
          shapeSize(shape)
        } values, received ${data.length}`,
      );
    }
    const dtype: DType = data instanceof Float32Array
      ? "f32"
      : data instanceof Int32Array
      ? "i32"
      : "u32";
    return this.#add(shape, dtype, { kind: "constant", data }, name);
  }

  /** Applies `op` to `inputs`; the op checks shapes and names the output. */
  apply<A>(op: OpDef<A>, inputs: readonly Tensor[], attrs: A): Tensor {
    for (const t of inputs) {
      if (t.graph !== this) {
        throw new Error(`Cannot apply "${op.name}": input ${t} belongs to another graph`);
      }
    }
    const out = op.output(inputs, attrs);
    checkShape(out.shape, op.name);
    return this.#add(out.shape, out.dtype, { kind: "op", op, inputs, attrs }, op.name);
  }

  #add(
    shape: readonly number[],
    dtype: DType,
    source: Tensor["source"],
    name: string,
  ): Tensor {
    const tensor = new Tensor(this, this.nodes.length, [...shape], dtype, source, name);
    this.nodes.push(tensor);
    return tensor;
  }
}

function checkShape(shape: readonly number[], name: string): void {
  if (!shape.every((d) => Number.isInteger(d) && d > 0)) {
    throw new Error(
      `Cannot make tensor "${name}": expected positive integer dimensions, received ${
        formatShape(shape)
      }`,
    );
  }
}

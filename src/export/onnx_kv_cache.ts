/**
 * The KV cache of an exported graph in the layout transformers.js and Optimum use: inputs
 * `past_key_values.{l}.key|value` and outputs `present.{l}.key|value`, float [batch_size,
 * kvHeads, past_sequence_length | total_sequence_length, headDim]. The batch dimension is named
 * exactly `batch_size` and kvHeads and headDim are fixed sizes, because transformers.js builds
 * the empty first cache from this metadata (other symbolic dims become 0). Holds no values.
 */

import type { KvLayout } from "../model/model_config.ts";
import type { KeyValueSource } from "./onnx_attention.ts";
import type { OnnxGraphBuilder } from "./onnx_graph_builder.ts";

/** The batch dimension's name, which transformers.js looks up to size the empty cache. */
export const BATCH_DIM = "batch_size";

/** The cache input names of layer `layer`. */
export function pastNames(layer: number): { key: string; value: string } {
  return { key: `past_key_values.${layer}.key`, value: `past_key_values.${layer}.value` };
}

/** The cache output names of layer `layer`. */
export function presentNames(layer: number): { key: string; value: string } {
  return { key: `present.${layer}.key`, value: `present.${layer}.value` };
}

/** The cache inputs of a graph under construction and, once the layers ran, its outputs. */
export class OnnxKvCache {
  readonly #presents: { value: string; name: string }[] = [];

  /** Declares every layer's past key and value input on `b`. */
  constructor(readonly b: OnnxGraphBuilder, readonly layout: KvLayout) {
    for (let l = 0; l < layout.layers; l++) {
      for (const name of Object.values(pastNames(l))) b.input(name, this.#shape("past"));
    }
  }

  /** Past keys and values of a layer followed by its new ones (the present, made an output). */
  readonly extend: KeyValueSource = (layer, keys, values) => {
    const past = pastNames(layer);
    const present = presentNames(layer);
    const joined = (pastValue: string, next: string, name: string) => {
      const value = this.b.op("Concat", [pastValue, next], { axis: { int: 2 } });
      this.#presents.push({ value, name });
      return value;
    };
    return {
      keys: joined(past.key, keys, present.key),
      values: joined(past.value, values, present.value),
    };
  };

  /** Adds the present outputs (call after the logits output, so logits come first). */
  addOutputs(): void {
    for (const { value, name } of this.#presents) {
      this.b.output(value, name, this.#shape("total"));
    }
  }

  #shape(length: "past" | "total") {
    const { kvHeads, headDim } = this.layout;
    return [BATCH_DIM, kvHeads, `${length}_sequence_length`, headDim];
  }
}

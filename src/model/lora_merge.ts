/**
 * An adapter merged into its base weights on the GPU: `W + (alpha/r) B A` for a Linear weight
 * [out, in], `W + (alpha/r) (B A)^T` for a GPT-2 Conv1D weight [in, out], as one graph compiled
 * once and run at every weight sync; the merged weights are copied into a model's variables in
 * the same submit. A model with merged weights generates at the base model's cost.
 */

import type { GpuContext } from "../gpu/device.ts";
import { compileGraph, type Executable } from "../graph/executable.ts";
import { Graph } from "../graph/graph.ts";
import type { Tensor, Variable } from "../graph/tensor.ts";
import { add } from "../ops/binary.ts";
import { matmul } from "../ops/matmul.ts";
import { scale } from "../ops/unary.ts";
import type { LoraAdapter } from "./lora.ts";

/** The compiled merge of one adapter over one set of base weights. */
export class LoraMerge {
  private constructor(
    readonly exe: Executable,
    /** Each adapted weight's HF name and its merged value in the graph. */
    readonly merged: readonly (readonly [string, Tensor])[],
  ) {}

  /** Compiles the merge of `adapter` over the base weights `base` (by HF name). */
  static async compile(
    gpu: GpuContext,
    base: ReadonlyMap<string, Variable>,
    adapter: LoraAdapter,
  ): Promise<LoraMerge> {
    const g = new Graph();
    const merged = adapter.targets.map((t) => {
      const name = `${t.module}.weight`;
      const weight = base.get(name);
      if (!weight) throw new Error(`Cannot merge the adapter: the model has no "${name}"`);
      const { a, b } = adapter.of(t.module)!;
      const [va, vb] = [g.variable(a), g.variable(b)];
      const product = t.conv1d ? matmul(va, vb, { transA: true, transB: true }) : matmul(vb, va);
      return [name, add(g.variable(weight), scale(product, adapter.scale))] as const;
    });
    const exe = await compileGraph(gpu, merged.map(([, t]) => t), "lora:merge");
    return new LoraMerge(exe, merged);
  }

  /**
   * Computes the merged weights and copies each into the variable of the same name in
   * `targets` (which may be the base weights themselves), in one submit.
   */
  async writeInto(targets: ReadonlyMap<string, Variable>): Promise<void> {
    for (const [name] of this.merged) {
      if (!targets.has(name)) throw new Error(`Cannot write merged weights: no "${name}" there`);
    }
    await this.exe.run(new Map(), {
      after: (encoder) => {
        for (const [name, tensor] of this.merged) {
          const target = targets.get(name)!;
          encoder.copyBufferToBuffer(this.exe.buffer(tensor), 0, target.buffer, 0, tensor.size * 4);
        }
      },
    });
  }

  /** Frees the merge's buffers. */
  destroy(): void {
    this.exe.destroy();
  }
}

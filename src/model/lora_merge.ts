/**
 * An adapter merged into weights on the GPU: `W + (alpha/r) B A` for a Linear weight [out, in],
 * `W + (alpha/r) (B A)^T` for a GPT-2 Conv1D weight [in, out], written into a model's weight
 * variables (another model's, e.g. the explorer's, or the base weights themselves) as one graph
 * compiled once per target and run at every weight sync: per weight a rank-r matmul, then a copy
 * of W into the target and an in-place add of the product (`shaders/gradient_sum.wgsl`: no
 * index arithmetic, which matters on CPU adapters). A model with merged weights generates at the
 * base model's cost.
 */

import type { GpuContext } from "../gpu/device.ts";
import { compileGraph, type Executable } from "../graph/executable.ts";
import { accumulateLaunch } from "../graph/gradient_sum.ts";
import { Graph } from "../graph/graph.ts";
import type { OpDef } from "../graph/op.ts";
import { sameShape, type Tensor, type Variable } from "../graph/tensor.ts";
import { matmul } from "../ops/matmul.ts";
import { scale } from "../ops/unary.ts";
import type { LoraAdapter } from "./lora.ts";

/** `target = base + delta`, in place in `target` (inputs: target, base, delta). */
const MERGE_INTO: OpDef<null> = {
  name: "lora_merge_into",
  inPlace: 0,
  output([target, base, delta]) {
    if (!sameShape(target.shape, base.shape) || !sameShape(base.shape, delta.shape)) {
      throw new Error(`Cannot merge ${delta} into ${target}: expected one shape for all three`);
    }
    return { shape: target.shape, dtype: "f32" };
  },
  launch(_ctx, [target, base, delta], out) {
    const n = target.tensor.size;
    const launch = accumulateLaunch(delta.buffer, out.buffer, n);
    return [
      base.buffer === out.buffer ? launch : {
        ...launch,
        before: (encoder) => encoder.copyBufferToBuffer(base.buffer, 0, out.buffer, 0, n * 4),
      },
    ];
  },
};

/** The compiled merge of one adapter over one set of base weights into one set of targets. */
export class LoraMerge {
  private constructor(readonly exe: Executable) {}

  /**
   * Compiles the merge of `adapter` over the base weights `base` into the variables of the same
   * names in `targets` (which may be `base` itself).
   */
  static async compile(
    gpu: GpuContext,
    base: ReadonlyMap<string, Variable>,
    adapter: LoraAdapter,
    targets: ReadonlyMap<string, Variable>,
  ): Promise<LoraMerge> {
    const g = new Graph();
    const outputs: Tensor[] = adapter.targets.map((t) => {
      const name = `${t.module}.weight`;
      const weight = base.get(name);
      const target = targets.get(name);
      if (!weight || !target) throw new Error(`Cannot merge the adapter: no "${name}" to merge`);
      const { a, b } = adapter.of(t.module)!;
      // The scale goes on A [r, in], the smallest operand.
      const [va, vb] = [scale(g.variable(a), adapter.scale), g.variable(b)];
      const product = t.conv1d ? matmul(va, vb, { transA: true, transB: true }) : matmul(vb, va);
      return g.apply(MERGE_INTO, [g.variable(target), g.variable(weight), product], null);
    });
    return new LoraMerge(await compileGraph(gpu, outputs, "lora:merge"));
  }

  /** Writes the merged weights into the targets (one submit). */
  async run(): Promise<void> {
    await this.exe.run();
  }

  /** Frees the merge's buffers. */
  destroy(): void {
    this.exe.destroy();
  }
}

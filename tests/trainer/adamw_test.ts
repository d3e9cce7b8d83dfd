/**
 * AdamW and clipGradNorm on the GPU against the f64 CPU reference: several steps on odd-sized
 * parameters with and without weight decay, a no-decay parameter, clipping active, inactive and
 * off, a changing learning rate; a state save/load round trip that continues identically; and
 * a tiny least-squares fit with autodiff gradients whose loss falls by a large factor.
 */

import { getGpu } from "../../src/gpu/device.ts";
import { grad } from "../../src/graph/autodiff.ts";
import { compileGraph, type Executable } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import { shapeSize, type Tensor, type Variable } from "../../src/graph/tensor.ts";
import { sub } from "../../src/ops/binary.ts";
import { matmul } from "../../src/ops/matmul.ts";
import { sumLast } from "../../src/ops/reduce.ts";
import { reshape } from "../../src/ops/reshape.ts";
import { square } from "../../src/ops/unary.ts";
import { adamwStepRef, clipScaleRef, gradNormRef } from "../../src/reference/adamw.ts";
import { AdamW, type AdamWOptions } from "../../src/trainer/adamw.ts";
import { clipGradNorm, NORM_INDEX, SCALE_INDEX } from "../../src/trainer/grad_clip.ts";
import { uniformArray } from "../../src/util/random.ts";
import { fromBf16, toBf16 } from "../../src/util/half.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";

/** A variable of `shape` holding `data`, on a buffer the caller destroys. */
async function makeVariable(
  name: string,
  shape: readonly number[],
  data: Float32Array<ArrayBuffer>,
): Promise<Variable> {
  const gpu = await getGpu();
  const buffer = gpu.device.createBuffer({
    label: name,
    size: shapeSize(shape) * 4,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  gpu.device.queue.writeBuffer(buffer, 0, data);
  return { name, shape, dtype: "f32", buffer };
}

/** An update graph fed with host gradients: run it once per step after `beginStep`. */
interface UpdateStep {
  exe: Executable;
  grads: Tensor[];
  /** [clip, ...updated params]. */
  outputs: Tensor[];
}

/** Compiles clipGradNorm + `opt.update` over gradient inputs shaped like `opt.params`. */
async function compileUpdate(opt: AdamW, maxNorm?: number): Promise<UpdateStep> {
  const g = new Graph();
  const grads = opt.params.map((p) => g.input(p.shape, "f32", `grad_${p.name}`));
  const clip = clipGradNorm(grads, maxNorm);
  const outputs = [clip, ...opt.update(grads, clip)];
  return { exe: await compileGraph(await getGpu(), outputs, "adamw_update"), grads, outputs };
}

/** Begins a step at `lr`, runs `step` on `grads` and reads [clip, ...params]. */
async function runUpdate(
  opt: AdamW,
  step: UpdateStep,
  grads: Float32Array<ArrayBuffer>[],
  lr: number,
) {
  opt.beginStep(lr);
  await step.exe.run(new Map(step.grads.map((t, i) => [t, grads[i]])));
  return await step.exe.read(step.outputs);
}

// 61 x 70 = 4270 elements spans two blocks of the norm's first stage (4096 each).
const SHAPES = [[37], [5, 13], [61, 70]] as const;
const NAMES = ["layer.weight", "layer.bias", "other.weight"];
const TOL = { atol: 1e-7, rtol: 1e-5 };

interface Case {
  label: string;
  /** The first step's learning rate (each step's is a little lower). */
  lr: number;
  options: AdamWOptions;
  /** Clip threshold, undefined for no clipping. */
  maxNorm?: number;
  /** Whether the clip is expected to scale the gradients down at every step. */
  clips: boolean;
}

const CASES: Case[] = [
  {
    label: "weight decay 0.1, clipping active",
    lr: 1e-2,
    options: { weightDecay: 0.1 },
    maxNorm: 1,
    clips: true,
  },
  {
    label: "no-decay bias, betas (0.8, 0.95), eps 1e-6, clipping inactive",
    lr: 3e-2,
    options: {
      betas: [0.8, 0.95],
      eps: 1e-6,
      weightDecay: 0.05,
      noDecay: (name) => name.endsWith(".bias"),
    },
    maxNorm: 100,
    clips: false,
  },
  {
    label: "no weight decay, no clipping",
    lr: 1e-3,
    options: { weightDecay: 0 },
    clips: false,
  },
];

Deno.test("AdamW + clipGradNorm: params, moments and norm match the f64 reference", async () => {
  const gpu = await getGpu();
  for (const [c, kase] of CASES.entries()) {
    const init = SHAPES.map((s, i) => uniformArray(shapeSize(s), 2000 + 10 * c + i));
    const params = await Promise.all(
      SHAPES.map((s, i) => makeVariable(NAMES[i], s, init[i])),
    );
    const opt = new AdamW(gpu, params, kase.options);
    const step = await compileUpdate(opt, kase.maxNorm);
    const [beta1, beta2] = kase.options.betas ?? [0.9, 0.999];
    const ref = SHAPES.map((s, i) => ({
      p: Float64Array.from(init[i]),
      m: new Float64Array(shapeSize(s)),
      v: new Float64Array(shapeSize(s)),
      wd: kase.options.noDecay?.(NAMES[i]) ? 0 : kase.options.weightDecay ?? 0.01,
    }));
    try {
      for (let t = 1; t <= 4; t++) {
        const lr = kase.lr * (1 - 0.1 * t); // a different rate every step
        const grads = SHAPES.map((s, i) => uniformArray(shapeSize(s), 3000 + 100 * c + 10 * t + i));
        const [clip, ...updated] = await runUpdate(opt, step, grads, lr);
        const norm = gradNormRef(grads);
        const scale = clipScaleRef(norm, kase.maxNorm);
        const label = `${kase.label}, step ${t}`;
        assertClose([clip[NORM_INDEX], clip[SCALE_INDEX]], [norm, scale], { ...TOL, label });
        assertEquals(scale < 1, kase.clips, `${label}: clipping active`);
        const { moments } = await opt.state();
        ref.forEach((r, i) => {
          adamwStepRef(r.p, grads[i], r.m, r.v, t, {
            lr,
            beta1,
            beta2,
            eps: kase.options.eps ?? 1e-8,
            weightDecay: r.wd,
          }, scale);
          const what = `${label}, ${NAMES[i]}`;
          assertClose(updated[i], r.p, { ...TOL, label: `${what}: param` });
          assertClose(moments.get(NAMES[i])!.m, r.m, { ...TOL, label: `${what}: exp_avg` });
          assertClose(moments.get(NAMES[i])!.v, r.v, { ...TOL, label: `${what}: exp_avg_sq` });
        });
      }
      assertEquals(opt.stepCount, 4);
      // In place: the updated parameters are the variables' own buffers.
      assertEquals(step.exe.buffer(step.outputs[1]) === params[0].buffer, true, "param storage");
    } finally {
      step.exe.destroy();
      opt.destroy();
      for (const p of params) p.buffer.destroy();
    }
  }
});

Deno.test("AdamW: state() / loadState() round trip continues identically", async () => {
  const gpu = await getGpu();
  const options: AdamWOptions = { weightDecay: 0.1 };
  const init = SHAPES.map((s, i) => uniformArray(shapeSize(s), 4000 + i));
  const gradsAt = (t: number) =>
    SHAPES.map((s, i) => uniformArray(shapeSize(s), 4100 + 10 * t + i));
  const paramsA = await Promise.all(SHAPES.map((s, i) => makeVariable(NAMES[i], s, init[i])));
  const optA = new AdamW(gpu, paramsA, options);
  const stepA = await compileUpdate(optA, 0.5);
  let paramsB: Variable[] = [];
  let optB: AdamW | undefined;
  let stepB: UpdateStep | undefined;
  try {
    let saved: Float32Array<ArrayBuffer>[] = [];
    for (let t = 1; t <= 3; t++) {
      saved = (await runUpdate(optA, stepA, gradsAt(t), 1e-2)).slice(1) as typeof saved;
    }
    const state = await optA.state();
    assertEquals(state.step, 3);
    // A fresh optimizer on copies of the parameters, restored from the saved state.
    paramsB = await Promise.all(SHAPES.map((s, i) => makeVariable(NAMES[i], s, saved[i])));
    optB = new AdamW(gpu, paramsB, options);
    optB.loadState(state);
    stepB = await compileUpdate(optB, 0.5);
    for (let t = 4; t <= 5; t++) {
      const a = await runUpdate(optA, stepA, gradsAt(t), 1e-2);
      const b = await runUpdate(optB, stepB, gradsAt(t), 1e-2);
      assertEquals(b.map((x) => [...x]), a.map((x) => [...x]), `step ${t}`);
    }
    const [stateA, stateB] = [await optA.state(), await optB.state()];
    assertEquals(stateB.step, 5);
    assertEquals(stateB, stateA);
    assertThrows(
      () =>
        optB!.loadState({ step: 1, moments: new Map([[NAMES[0], state.moments.get(NAMES[0])!]]) }),
      Error,
      `expected moments of 65 values for "layer.bias", received none`,
    );
  } finally {
    stepA.exe.destroy();
    stepB?.exe.destroy();
    optA.destroy();
    optB?.destroy();
    for (const p of [...paramsA, ...paramsB]) p.buffer.destroy();
  }
});

Deno.test("AdamW: minimises sum((W x - y)^2) with autodiff gradients in one compiled graph", async () => {
  const gpu = await getGpu();
  const [rows, cols, batch] = [4, 3, 8];
  const target = uniformArray(rows * cols, 5000);
  const x = uniformArray(cols * batch, 5001);
  // y = W_target x, on the CPU.
  const y = new Float32Array(rows * batch);
  for (let r = 0; r < rows; r++) {
    for (let b = 0; b < batch; b++) {
      for (let k = 0; k < cols; k++) y[r * batch + b] += target[r * cols + k] * x[k * batch + b];
    }
  }
  const w = await makeVariable("w", [rows, cols], new Float32Array(rows * cols));
  const opt = new AdamW(gpu, [w], { weightDecay: 0 });
  const g = new Graph();
  const xs = g.input([cols, batch], "f32", "x");
  const ys = g.input([rows, batch], "f32", "y");
  const wt = g.variable(w);
  const residual = sub(matmul(wt, xs), ys);
  const loss = sumLast(reshape(square(residual), [rows * batch]));
  const grads = grad(loss, [wt]);
  const clip = clipGradNorm(grads, 5);
  const outputs = [loss, clip, ...opt.update(grads, clip)];
  const exe = await compileGraph(gpu, outputs, "least_squares");
  try {
    const losses: number[] = [];
    for (let t = 0; t < 50; t++) {
      opt.beginStep(0.1);
      await exe.run(new Map([[xs, x], [ys, y]]));
      losses.push((await exe.read([loss]))[0][0]);
    }
    const [first, last] = [losses[0], losses[losses.length - 1]];
    if (!(last < first / 100)) {
      throw new Error(`least squares: loss fell from ${first} to ${last}, expected a factor > 100`);
    }
  } finally {
    exe.destroy();
    opt.destroy();
    w.buffer.destroy();
  }
});

Deno.test("AdamW and clipGradNorm reject bad configurations, naming them", async () => {
  const gpu = await getGpu();
  const p = await makeVariable("p", [3], new Float32Array(3));
  try {
    assertThrows(
      () => new AdamW(gpu, [p, p], {}),
      Error,
      'parameter name "p" appears twice',
    );
    assertThrows(
      () => new AdamW(gpu, [p], { betas: [0.9, 1] }),
      Error,
      "expected beta2 in [0, 1), received 1",
    );
    const opt = new AdamW(gpu, [p], {});
    const g = new Graph();
    const wrong = g.input([4], "f32", "g4");
    assertThrows(
      () => opt.update([wrong], clipGradNorm([wrong])),
      Error,
      'Cannot apply "adamw" to p[3]:f32: expected an f32 gradient of shape [3], received g4[4]:f32',
    );
    assertThrows(() => clipGradNorm([wrong], 0), Error, "positive finite maxNorm, received 0");
    assertThrows(() => opt.beginStep(NaN), Error, "expected a finite lr >= 0, received NaN");
    opt.destroy();
  } finally {
    p.buffer.destroy();
  }
});

Deno.test("AdamW with bf16 moments: half the moment bytes, steps as the reference rounding them", async () => {
  const gpu = await getGpu();
  const init = SHAPES.map((s, i) => uniformArray(shapeSize(s), 4000 + i));
  const params = await Promise.all(SHAPES.map((s, i) => makeVariable(NAMES[i], s, init[i])));
  const opt = new AdamW(gpu, params, { weightDecay: 0.1, momentsDtype: "bfloat16" });
  const step = await compileUpdate(opt, 1);
  const round = (x: Float64Array) => x.set(fromBf16(toBf16(Float32Array.from(x))));
  const ref = SHAPES.map((s, i) => ({
    p: Float64Array.from(init[i]),
    m: new Float64Array(shapeSize(s)),
    v: new Float64Array(shapeSize(s)),
  }));
  try {
    const bytes = opt.stateBuffers.reduce((n, b) => n + b.size, 0);
    assertEquals(bytes, SHAPES.reduce((n, s) => n + 2 * 4 * Math.ceil(shapeSize(s) / 2), 0));
    for (let t = 1; t <= 3; t++) {
      const grads = SHAPES.map((s, i) => uniformArray(shapeSize(s), 5000 + 10 * t + i));
      const [, ...updated] = await runUpdate(opt, step, grads, 1e-2);
      const scale = clipScaleRef(gradNormRef(grads), 1);
      const { moments } = await opt.state();
      ref.forEach((r, i) => {
        const o = { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.1 };
        adamwStepRef(r.p, grads[i], r.m, r.v, t, o, scale);
        round(r.m);
        round(r.v);
        const label = `${NAMES[i]} step ${t}`;
        assertClose(updated[i], r.p, { atol: 1e-4, rtol: 1e-4, label: `${label} param` });
        assertClose(moments.get(NAMES[i])!.m, r.m, { atol: 1e-6, rtol: 1e-2, label: `${label} m` });
        assertClose(moments.get(NAMES[i])!.v, r.v, { atol: 1e-8, rtol: 1e-2, label: `${label} v` });
      });
    }
    // A saved state loads back into bf16 moments as it was.
    const saved = await opt.state();
    opt.loadState(saved);
    const again = await opt.state();
    for (const name of NAMES) {
      assertEquals([...again.moments.get(name)!.v], [...saved.moments.get(name)!.v]);
    }
  } finally {
    step.exe.destroy();
    opt.destroy();
    params.forEach((p) => p.buffer.destroy());
  }
});

/**
 * `deno run -A bench/train.ts`: training tokens/s of rft's train step (`TrainStep`: forward,
 * backward, gradient clipping, AdamW, one metrics readback) next to forward + backward alone
 * (the token log-probs and their gradients in one graph, one readback) on the same batch, and
 * the step's time over forward + backward's. Models: the built-in example's (`addition`, from
 * scratch, on a batch the size of its GRPO step: 32 prompts x 8 rollouts) and random models of
 * `_model_shapes.ts` (e.g. `smollm2-135m`). Every train step uses the example's GRPO settings
 * (PPO-clip loss, optimizer, clip). The batch is synthetic (random tokens, +-1 advantages);
 * each figure is the mean of `--reps` runs after a warm-up run that compiles the graphs.
 * Model FLOPs per second (6 x parameters x tokens over the train step's time) are divided by
 * rft's own 1024^3 matmul rate measured in the same run, before and after the models (best of
 * both): the share of its matmul speed the whole train step reaches.
 */

import { type Experience, newEid } from "../src/buffer/experience.ts";
import { getGpu, type GpuContext } from "../src/gpu/device.ts";
import { grad } from "../src/graph/autodiff.ts";
import { compileGraph } from "../src/graph/executable.ts";
import { Graph } from "../src/graph/graph.ts";
import { shapeSize } from "../src/graph/tensor.ts";
import { parseHfConfig } from "../src/model/hf_config.ts";
import { initParameters } from "../src/model/init.ts";
import { padBatch, paddedLength } from "../src/model/padded_batch.ts";
import { parameterSpecs } from "../src/model/parameters.ts";
import { createModel, type PolicyModel } from "../src/model/policy.ts";
import { tokenScores } from "../src/model/token_scores.ts";
import { scoredHidden } from "../src/model/transformer.ts";
import { trainStepFor } from "../src/run/stage_trainer.ts";
import { mulberry32 } from "../src/util/random.ts";
import {
  type BenchStage,
  EXAMPLE_CONFIG,
  EXAMPLE_RL_STAGE,
  initialPolicy,
  loadBenchStage,
} from "./_example_stage.ts";
import { benchArgs, integerFlag } from "./_flags.ts";
import { modelShape } from "./_model_shapes.ts";
import { figure, writeJsonReport } from "./_report.ts";
import { rftMatmulRate } from "./_rft_matmul.ts";
import { formatTable } from "./_table.ts";

const SCRIPT = "bench/train.ts";
/** The built-in example's model, as `--models` names it. */
const EXAMPLE_MODEL = "addition";

const HELP = `Usage: deno run -A ${SCRIPT} [--models ${EXAMPLE_MODEL},smollm2-135m] [--rows N]
  [--len T] [--reps 2] [--json FILE]
--models  "${EXAMPLE_MODEL}" (examples/addition/model, from scratch) or a shape of
          bench/_model_shapes.ts (tiny, small, smollm2-135m: random weights)
--rows    sequences per batch (default: ${EXAMPLE_MODEL} 256 = its GRPO step, others 2)
--len     tokens per sequence (default: ${EXAMPLE_MODEL} 14 = prompt 8 + response 6, others 64)`;

/** The default batch of the random shapes: small enough for a CPU adapter. */
const SHAPE_BATCH = { rows: 2, len: 64 };

/** What one model measured. */
interface TrainResult {
  model: string;
  parameters: number;
  rows: number;
  /** Tokens per sequence (the graphs pad them to `paddedLength`). */
  len: number;
  /** Forward + backward graph: seconds per run, tokens/s and dispatches. */
  forwardBackward: { seconds: number; tokensPerS: number; dispatches: number };
  /** The train step: seconds per step, tokens/s. */
  trainStep: { seconds: number; tokensPerS: number };
  /** trainStep.seconds / forwardBackward.seconds. */
  stepOverForwardBackward: number;
  /** 6 x parameters x tokens / trainStep.seconds, in GFLOP/s. */
  modelGflops: number;
}

/** Side of the square matmul whose rate the model FLOPs are compared with. */
const MATMUL_SIZE = 1024;

/** Mean seconds of `fn` over `reps` calls after one untimed warm-up call. */
async function meanSeconds(reps: number, fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const start = performance.now();
  for (let i = 0; i < reps; i++) await fn();
  return (performance.now() - start) / 1000 / reps;
}

/**
 * `rows` sequences of `len` random tokens, the first `promptLength` the prompt, in groups of 8
 * per task; rewards and advantages alternate 1 / -1 (GRPO's signs), old log-probs are a random
 * model's -ln(vocab).
 */
function syntheticBatch(
  rows: number,
  len: number,
  promptLength: number,
  vocab: number,
): Experience[] {
  const random = mulberry32(rows * 7919 + len);
  return Array.from({ length: rows }, (_, r) => {
    const tokens = Array.from({ length: len }, () => Math.floor(random() * vocab));
    const actionMask = tokens.map((_, t) => (t >= promptLength ? 1 : 0));
    const sign = r % 2 === 0 ? 1 : -1;
    const taskId = `task${Math.floor(r / 8)}`;
    return {
      tokens,
      promptLength,
      actionMask,
      logprobs: actionMask.map((m) => -m * Math.log(vocab)),
      reward: (sign + 1) / 2,
      advantages: actionMask.map((m) => m * sign),
      info: { taskId, runId: r % 8, policyVersion: 0, eid: newEid(taskId, r % 8) },
    };
  });
}

/**
 * Seconds to compute the token log-probs of `sequences` and their gradients with respect to every
 * parameter (one readback per graph run), and the dispatches of one run. The rows are cut into
 * runs whose activations fit one storage binding (as the train step's micro-batches are), each
 * run of one compiled graph (two when the last run is shorter).
 */
async function timeForwardBackward(
  gpu: GpuContext,
  model: PolicyModel,
  sequences: readonly number[][],
  reps: number,
): Promise<{ seconds: number; dispatches: number }> {
  const cfg = model.config;
  const seq = paddedLength(Math.max(...sequences.map((s) => s.length)));
  const perRun = Math.max(1, Math.floor(model.activationTokens / seq));
  const graphs = new Map<number, ForwardBackwardGraph>(); // by rows per run
  try {
    const runs: { graph: ForwardBackwardGraph; batch: ReturnType<typeof padBatch> }[] = [];
    for (let first = 0; first < sequences.length; first += perRun) {
      const rows = sequences.slice(first, first + perRun);
      let graph = graphs.get(rows.length);
      if (!graph) {
        graph = await forwardBackwardGraph(gpu, model, rows.length, seq);
        graphs.set(rows.length, graph);
      }
      runs.push({ graph, batch: padBatch(rows, seq, cfg.vocabSize) });
    }
    const seconds = await meanSeconds(reps, async () => {
      for (const { graph: { exe, inputs, logprobs }, batch } of runs) {
        await exe.run(
          new Map([
            [inputs.ids, batch.ids],
            [inputs.positions, batch.positions],
            [inputs.segments, batch.segments],
            [inputs.targets, batch.targets],
          ]),
        );
        await exe.read([logprobs]);
      }
    });
    return { seconds, dispatches: runs[0].graph.exe.stats.dispatches };
  } finally {
    graphs.forEach(({ exe }) => exe.destroy());
  }
}

/** What {@link forwardBackwardGraph} compiles. */
type ForwardBackwardGraph = Awaited<ReturnType<typeof forwardBackwardGraph>>;

/** The compiled graph of the token log-probs of `rows` x `seq` tokens and their gradients. */
async function forwardBackwardGraph(
  gpu: GpuContext,
  model: PolicyModel,
  rows: number,
  seq: number,
) {
  const cfg = model.config;
  const g = new Graph();
  const input = (name: string) => g.input([rows, seq], "i32", name);
  const inputs = {
    ids: input("ids"),
    positions: input("positions"),
    segments: input("segments"),
    targets: input("targets"),
  };
  const w = model.weights(g);
  const hidden = scoredHidden(cfg, w, inputs);
  const logprobs = tokenScores(cfg, w, hidden, inputs.targets, { recompute: true }).logp;
  const weights = parameterSpecs(cfg).map((s) => g.variable(model.params.get(s.name)!));
  const exe = await compileGraph(gpu, [logprobs, ...grad(logprobs, weights)], "bench:fwd+bwd");
  return { exe, inputs, logprobs };
}

/** The model `name` with its batch shape (prompt length, default rows and length). */
async function benchModel(name: string, bench: BenchStage, gpu: GpuContext) {
  if (name === EXAMPLE_MODEL) {
    const { stage, algorithm } = bench;
    const { maxPromptTokens, maxResponseTokens } = stage.model;
    return {
      model: await initialPolicy(stage, gpu),
      promptLength: maxPromptTokens,
      rows: stage.buffer.batchSize * algorithm.repeatTimes,
      len: maxPromptTokens + maxResponseTokens,
    };
  }
  const raw = modelShape(name);
  const model = await createModel(raw, initParameters(parseHfConfig(raw), 1), { gpu });
  return { model, promptLength: SHAPE_BATCH.len / 2, ...SHAPE_BATCH };
}

/** Measures model `name` (see the file comment); `rows` / `len` override its default batch. */
async function measure(
  name: string,
  bench: BenchStage,
  gpu: GpuContext,
  options: { rows?: number; len?: number; reps: number },
): Promise<TrainResult> {
  const chosen = await benchModel(name, bench, gpu);
  const { model } = chosen;
  const rows = options.rows ?? chosen.rows;
  const len = options.len ?? chosen.len;
  if (len > model.config.maxPositions) {
    model.destroy();
    throw new Error(
      `Cannot run ${SCRIPT} on model "${name}": expected --len <= its ${model.config.maxPositions} positions, received ${len}`,
    );
  }
  const promptLength = Math.min(chosen.promptLength, len - 1);
  const batch = syntheticBatch(rows, len, promptLength, model.config.vocabSize);
  const tokens = rows * len;
  const trainStep = trainStepFor(bench.stage, bench.algorithm, model);
  try {
    const forwardBackward = await timeForwardBackward(
      gpu,
      model,
      batch.map((e) => e.tokens),
      options.reps,
    );
    const stepSeconds = await meanSeconds(options.reps, () => trainStep.step(batch));
    const parameters = [...model.params.values()].reduce((sum, v) => sum + shapeSize(v.shape), 0);
    return {
      model: name,
      parameters,
      rows,
      len,
      forwardBackward: { ...forwardBackward, tokensPerS: tokens / forwardBackward.seconds },
      trainStep: { seconds: stepSeconds, tokensPerS: tokens / stepSeconds },
      stepOverForwardBackward: stepSeconds / forwardBackward.seconds,
      modelGflops: (6 * parameters * tokens) / stepSeconds / 1e9,
    };
  } finally {
    trainStep.destroy();
    model.destroy();
  }
}

async function main() {
  const { values } = benchArgs(SCRIPT, {
    args: Deno.args,
    options: {
      models: { type: "string", default: `${EXAMPLE_MODEL},smollm2-135m` },
      rows: { type: "string" },
      len: { type: "string" },
      reps: { type: "string", default: "2" },
      config: { type: "string", default: EXAMPLE_CONFIG },
      stage: { type: "string", default: EXAMPLE_RL_STAGE },
      json: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const options = {
    rows: values.rows === undefined ? undefined : integerFlag(SCRIPT, "rows", values.rows),
    len: values.len === undefined ? undefined : integerFlag(SCRIPT, "len", values.len, 2),
    reps: integerFlag(SCRIPT, "reps", values.reps),
  };
  const names = values.models.split(",");
  for (const name of names) if (name !== EXAMPLE_MODEL) modelShape(name);
  const gpu = await getGpu();
  console.log(
    `adapter: ${gpu.summary.description}${gpu.summary.isFallback ? " (fallback, CPU)" : ""}`,
  );
  const bench = await loadBenchStage(values.config, values.stage);
  const matmulRate = () => rftMatmulRate(gpu, MATMUL_SIZE, 3, 500);
  const matmulBefore = await matmulRate();
  const results: TrainResult[] = [];
  for (const name of names) {
    results.push(await measure(name, bench, gpu, options));
    console.error(`  measured ${name}`);
  }
  const matmulAfter = await matmulRate();
  const matmulGflops = Math.max(matmulBefore.gflops, matmulAfter.gflops);
  console.log(
    `\ntraining tokens/s, mean of ${options.reps} runs after a warm-up (train step: ` +
      `${bench.algorithm.policyLoss.name} loss, clip, AdamW as stage "${values.stage}" sets them)`,
  );
  console.log(formatTable<TrainResult>([
    ["model", (r) => r.model],
    ["params", (r) => `${figure(r.parameters / 1e6)}M`],
    ["rows x len", (r) => `${r.rows} x ${r.len}`],
    ["fwd+bwd tok/s", (r) => figure(r.forwardBackward.tokensPerS)],
    ["train step tok/s", (r) => figure(r.trainStep.tokensPerS)],
    ["step / fwd+bwd", (r) => figure(r.stepOverForwardBackward)],
    ["step s", (r) => figure(r.trainStep.seconds)],
    ["fwd+bwd dispatches", (r) => String(r.forwardBackward.dispatches)],
    ["model GFLOP/s", (r) => figure(r.modelGflops)],
    ["/ rft matmul", (r) => figure(r.modelGflops / matmulGflops)],
  ], results));
  console.log(
    `rft matmul ${MATMUL_SIZE}^3 (${matmulBefore.variant}): ${
      figure(matmulBefore.gflops)
    } GFLOP/s ` +
      `before the models, ${figure(matmulAfter.gflops)} after; model GFLOP/s = 6 x params x ` +
      `tokens / step s, divided by the better of the two.`,
  );
  if (values.json) {
    await writeJsonReport(values.json, "train", gpu, {
      reps: options.reps,
      stage: values.stage,
      matmul: { size: MATMUL_SIZE, before: matmulBefore, after: matmulAfter },
      results,
    });
  }
}

if (import.meta.main) await main();

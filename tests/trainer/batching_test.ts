import assert from "node:assert/strict";
import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { type Experience, newEid } from "../../src/buffer/experience.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { packBatch, paddedLength } from "../../src/model/padded_batch.ts";
import { createModel, type PolicyModel } from "../../src/model/policy.ts";
import { planMicroBatches } from "../../src/trainer/micro_batch_plan.ts";
import { learningRate } from "../../src/trainer/lr_schedule.ts";
import { Trainer } from "../../src/trainer/trainer.ts";
import { scoredFrom, TrainStep, type TrainStepConfig } from "../../src/trainer/train_step.ts";
import { uniformArray } from "../../src/util/random.ts";
import { TINY_QWEN2 } from "./_tiny_qwen2.ts";
import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";
import { KL_FN } from "../../src/algorithm/kl.ts";
import { ENTROPY_LOSS_FN } from "../../src/algorithm/entropy.ts";
import { configure } from "../../src/util/registry.ts";

const RAW = { ...TINY_QWEN2, tie_word_embeddings: false };

Deno.test("planMicroBatches: every sequence once, budget respected, pairs kept, longest first", () => {
  const lengths = [5, 17, 3, 30, 9, 12, 7, 20];
  const plan = planMicroBatches(lengths, { maxTokens: 64, split: "rows" });
  assertEquals(plan.flatMap((m) => m.rows.flat()).sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7]);
  for (const m of plan) {
    assert(m.rows.every((r) => r.length === 1));
    assert(m.rows.every(([i]) => lengths[i] <= m.seq), JSON.stringify(m));
    assert(m.rows.length * m.seq <= 64 || m.rows.length === 1, JSON.stringify(m));
  }
  assertEquals(plan[0].rows[0], [3]); // the 30-token sequence sets the first row length (32)
  const pairs = planMicroBatches(lengths, { maxTokens: 40, split: "pairs" });
  for (const m of pairs) {
    const flat = m.rows.flat();
    for (let r = 0; r < flat.length; r += 2) {
      assertEquals(flat[r] % 2 === 0 && flat[r + 1] === flat[r] + 1, true);
    }
  }
  assertEquals(planMicroBatches(lengths, { maxTokens: 16 }).length, 1); // no split: never cut
  assertEquals(planMicroBatches(lengths, { split: "tokens" })[0].rows.length, 8); // no budget
  assertThrows(() => planMicroBatches([3, 4, 5], { maxTokens: 8, split: "pairs" }), Error, "even");
  assertThrows(() => planMicroBatches(lengths, { maxTokens: 0, split: "rows" }), Error, "budget");
});

Deno.test("planMicroBatches packs first-fit decreasing into rows as long as the longest", () => {
  const lengths = [9, 4, 7, 3, 16, 5];
  const plan = planMicroBatches(lengths, { split: "tokens", pack: true, maxTokens: 32 });
  // Rows of 16: [16] | [9, 7] | [5, 4, 3]; two rows per micro-batch.
  assertEquals(plan.map((m) => m.seq), [16, 16]);
  assertEquals(plan.map((m) => m.rows), [[[4], [0, 2]], [[5, 1, 3]]]);
  const batch = packBatch([[[1, 2, 3], [4, 5]]], 8, 13);
  assertEquals(Array.from(batch.segments), [0, 0, 0, 1, 1, -1, -1, -1]);
  assertEquals(Array.from(batch.positions), [0, 1, 2, 0, 1, 0, 0, 0]);
  assertEquals(Array.from(batch.targets), [2, 3, 13, 5, 13, 13, 13, 13]);
});

/**
 * Random experiences of varying length with every per-token field a loss may read; every third
 * one `longBy` tokens longer.
 */
function experiences(count: number, seed: number, longBy = 0): Experience[] {
  return Array.from({ length: count }, (_, b) => {
    const length = 4 + ((b * 7 + seed) % 19) + (b % 3 === 0 ? longBy : 0);
    const prompt = 2 + (b % 3);
    const noise = uniformArray(3 * length, seed * 100 + b, -1, 1);
    const tokens = Array.from({ length }, (_, t) => Math.floor((noise[t] + 1) * 6.4) % 13);
    const mask = tokens.map((_, t) => (t >= prompt ? 1 : 0));
    const advantage = b % 2 === 0 ? 0.8 - b / count : -0.5 + b / count;
    return {
      tokens,
      promptLength: prompt,
      actionMask: mask,
      logprobs: tokens.map((_, t) => (mask[t] ? -2.5 + 0.3 * noise[length + t] : 0)),
      referenceLogprobs: tokens.map((_, t) => (mask[t] ? -2.5 + 0.3 * noise[2 * length + t] : 0)),
      advantages: mask.map((m) => m * advantage),
      reward: advantage,
      info: { taskId: `t${b >> 1}`, runId: b, policyVersion: 0, eid: newEid(`t${b >> 1}`, b) },
    };
  });
}

async function model(): Promise<PolicyModel> {
  return await createModel(RAW, initParameters(parseHfConfig(RAW), 11, 0.3));
}

/**
 * Two steps of the same model and batch, uncut and cut under `budget`: the parameter changes
 * (AdamW with eps 1 is close to SGD, so they follow the gradients element by element), losses
 * and gradient norms agree.
 */
async function assertCutMatchesUncut(
  config: Omit<TrainStepConfig, "optimizer">,
  budget: number,
  minMicroBatches: number,
  batch = experiences(10, 3),
): Promise<void> {
  const runs = [];
  for (const maxTokensPerMicroBatch of [undefined, budget]) {
    const m = await model();
    const before = await m.readParameters();
    const step = new TrainStep(m, {
      ...config,
      optimizer: { lr: 1, eps: 1, weightDecay: 0 },
      maxTokensPerMicroBatch,
    });
    const metrics = [await step.step(batch), await step.step(batch)];
    runs.push({ before, after: await m.readParameters(), metrics });
    step.destroy();
  }
  const [whole, cut] = runs;
  assert(cut.metrics[0].micro_batches >= minMicroBatches, JSON.stringify(cut.metrics[0]));
  assertEquals(whole.metrics[0].micro_batches, 1);
  for (let s = 0; s < 2; s++) {
    // The loss terms and the norm are exact; other metrics (e.g. a clip fraction that is a
    // token mean under a sequence-mean loss) are combined with their term's weight, approximately.
    for (const key of ["loss", "pg_loss", "kl_loss", "entropy", "grad_norm", "lr"]) {
      if (!(key in whole.metrics[s])) continue;
      assertClose(Float32Array.of(cut.metrics[s][key]), Float64Array.of(whole.metrics[s][key]), {
        rtol: 1e-4,
        atol: 1e-6,
        label: `step ${s} ${key}`,
      });
    }
  }
  assertSameUpdates(cut, whole);
}

/** Parameters before and after a run's steps, by name. */
interface ParameterRun {
  before: Map<string, Float32Array>;
  after: Map<string, Float32Array>;
}

/** Every parameter of `actual` moved as in `expected` (element by element). */
function assertSameUpdates(actual: ParameterRun, expected: ParameterRun): void {
  for (const [name, after] of expected.after) {
    const delta = (run: ParameterRun) =>
      Float64Array.from(run.after.get(name)!, (x, i) => x - run.before.get(name)![i]);
    assertClose(new Float32Array(delta(actual)), delta(expected), {
      rtol: 1e-3,
      atol: 1e-6,
      label: name,
    });
    assert(after.length > 0);
  }
}

Deno.test("micro-batches: PPO token-mean with KL loss and entropy, packed", async () => {
  await assertCutMatchesUncut(
    {
      policyLoss: configure(POLICY_LOSS_FN, "ppo"),
      klLoss: configure(KL_FN, "k3", { kl_coef: 0.1 }),
      entropyLoss: configure(ENTROPY_LOSS_FN, "default", { entropy_coef: 0.01 }),
      gradClip: 0.5,
      packSequences: true,
    },
    48,
    3,
  );
});

Deno.test("micro-batches: GSPO (seq-mean-token-mean), one sequence per row", async () => {
  await assertCutMatchesUncut({ policyLoss: configure(POLICY_LOSS_FN, "gspo") }, 40, 3);
});

Deno.test("micro-batches: more shapes in a step than graphs kept (some dropped mid-step)", async () => {
  const batch = experiences(10, 3, 10);
  const shapes = planMicroBatches(batch.map((e) => e.tokens.length), {
    maxTokens: 48,
    split: "rows",
  }).map((m) => `${m.rows.length}x${m.seq}`);
  assert(new Set(shapes).size > 2, shapes.join(" "));
  await assertCutMatchesUncut({ policyLoss: configure(POLICY_LOSS_FN, "gspo") }, 48, 3, batch);
});

Deno.test("a step skips the LM head before the first scored column and gives the full width's result", async () => {
  // 16 more prompt tokens before each experience (rows of 20 to 32 tokens, padded to 32): the
  // loss reads no logits before column 16. seq-mean-token-sum-norm with the padded width (32) as
  // its scale factor lets the step skip them; without a factor it divides by the width, so it
  // keeps every column: the same loss either way.
  const prefix = (e: Experience): Experience => {
    const zeros = new Array(16).fill(0);
    return {
      ...e,
      tokens: [...zeros.map((_, t) => (t * 5 + 1) % 13), ...e.tokens],
      promptLength: e.promptLength + 16,
      actionMask: [...zeros, ...e.actionMask],
      logprobs: [...zeros, ...e.logprobs],
      referenceLogprobs: [...zeros, ...e.referenceLogprobs!],
      advantages: [...zeros, ...e.advantages!],
    };
  };
  const batch = experiences(10, 3).filter((e) => e.tokens.length <= 16).map(prefix);
  assertEquals(batch.length, 8);
  const runs = [];
  for (const loss_scale_factor of [32, null]) {
    const m = await model();
    const before = await m.readParameters();
    const step = new TrainStep(m, {
      policyLoss: configure(POLICY_LOSS_FN, "ppo", {
        loss_agg_mode: "seq-mean-token-sum-norm",
        loss_scale_factor,
      }),
      entropyLoss: configure(ENTROPY_LOSS_FN, "default", { entropy_coef: 0.01 }),
      optimizer: { lr: 1, eps: 1, weightDecay: 0 },
    });
    const metrics = await step.step(batch);
    runs.push({ before, after: await m.readParameters(), metrics, skipped: step.stats });
    step.destroy();
    m.destroy();
  }
  const [skipping, full] = runs;
  assertEquals(skipping.skipped.skippedPositions, 8 * 16);
  assertEquals(full.skipped.skippedPositions, 0);
  for (const key of ["loss", "pg_loss", "entropy", "grad_norm"]) {
    assertClose(Float32Array.of(skipping.metrics[key]), Float64Array.of(full.metrics[key]), {
      rtol: 1e-4,
      atol: 1e-6,
      label: key,
    });
  }
  assertSameUpdates(skipping, full);
});

Deno.test("scoredFrom: the first set column of any row, rounded down to 16; 0 when none", () => {
  const seq = 40;
  const mask = new Float32Array(2 * seq);
  assertEquals(scoredFrom(mask, seq), 0);
  mask[seq + 35] = 1; // row 1 from column 35
  assertEquals(scoredFrom(mask, seq), 32);
  mask[20] = 1; // row 0 from column 20
  assertEquals(scoredFrom(mask, seq), 16);
  mask[3] = 1;
  assertEquals(scoredFrom(mask, seq), 0);
});

Deno.test("micro-batches: SFT with seq-mean-token-sum-norm and seq-mean-token-sum", async () => {
  for (const mode of ["seq-mean-token-sum-norm", "seq-mean-token-sum"]) {
    await assertCutMatchesUncut(
      { policyLoss: configure(POLICY_LOSS_FN, "sft", { loss_agg_mode: mode }) },
      40,
      3,
    );
  }
});

Deno.test("micro-batches: DPO keeps pairs together and matches the uncut step", async () => {
  await assertCutMatchesUncut(
    { policyLoss: configure(POLICY_LOSS_FN, "dpo", { beta: 0.5 }) },
    40,
    3,
  );
});

Deno.test("micro-batches: a mixed loss (mix) is cut by whole rows, expert flags kept per row", async () => {
  const m = await model();
  const batch = experiences(6, 5);
  const step = new TrainStep(m, {
    policyLoss: configure(POLICY_LOSS_FN, "mix"),
    optimizer: { lr: 1e-3 },
    maxTokensPerMicroBatch: 16,
  });
  const isExpert = batch.map((_, i) => i < 2);
  const metrics = await step.step(batch, { isExpert });
  assertEquals(metrics.micro_batches, 6, "one 5-token row per micro-batch under 16 tokens");
  assert(Number.isFinite(metrics["expert/pg_loss"] ?? metrics.loss), JSON.stringify(metrics));
  await assertRejects(() => step.step(batch), Error, "expert flag");
  step.destroy();
});

Deno.test("Trainer: PPO epochs x mini-batches, learning rate by train step", async () => {
  const m = await model();
  const schedule = {
    lr: 0.01,
    lr_warmup_steps: 2,
    warmup_style: "cosine" as const,
    total_training_steps: 10,
  };
  const trainStep = new TrainStep(m, {
    policyLoss: configure(POLICY_LOSS_FN, "ppo"),
    optimizer: schedule,
  });
  const trainer = new Trainer({ trainStep, ppoEpochs: 2, miniBatchSize: 3, temperature: 1 });
  const metrics = await trainer.train(experiences(7, 2), { lrStep: 5 });
  assertEquals(metrics["actor/optimizer_steps"], 6); // 2 epochs x ceil(7 / 3)
  assertEquals(trainStep.optimizer.stepCount, 6);
  assertClose(Float32Array.of(metrics["actor/lr"]), Float64Array.of(learningRate(schedule, 5)));
  assertEquals(metrics["actor/batch_size"], 7);
  trainStep.destroy();
});

Deno.test("micro-batches of one shape share one compiled graph", async () => {
  // Bind groups made during a first step: each compiled graph makes its own, runs make none.
  const bindGroupsOfFirstStep = async (rows: number) => {
    const m = await model();
    const batch = experiences(1, 1).flatMap((e) =>
      Array.from({ length: rows }, (_, r) => ({ ...e, info: { ...e.info, runId: r } }))
    );
    const step = new TrainStep(m, {
      policyLoss: configure(POLICY_LOSS_FN, "ppo"),
      optimizer: { lr: 1e-3 },
      maxTokensPerMicroBatch: 2 * paddedLength(batch[0].tokens.length),
    });
    const real = GPUDevice.prototype.createBindGroup;
    let made = 0;
    GPUDevice.prototype.createBindGroup = function (descriptor) {
      made++;
      return real.call(this, descriptor);
    };
    try {
      const metrics = await step.step(batch);
      assertEquals(metrics.micro_batches, rows / 2);
    } finally {
      GPUDevice.prototype.createBindGroup = real;
      step.destroy();
      m.destroy();
    }
    return made;
  };
  const two = await bindGroupsOfFirstStep(4);
  const four = await bindGroupsOfFirstStep(8);
  assert(two > 0);
  assertEquals(four, two, "4 micro-batches of one shape compile what 2 do");
});

Deno.test("gradient checkpointing gives the stored step's losses and updates, cut or not", async () => {
  const batch = experiences(10, 5);
  for (const maxTokensPerMicroBatch of [undefined, 64]) {
    const runs = [];
    for (const gradientCheckpointing of [false, true]) {
      const m = await model();
      const before = await m.readParameters();
      const step = new TrainStep(m, {
        policyLoss: configure(POLICY_LOSS_FN, "ppo"),
        klLoss: configure(KL_FN, "k2"),
        entropyLoss: configure(ENTROPY_LOSS_FN, "default", { entropy_coef: 0.01 }),
        optimizer: { lr: 1, eps: 1, weightDecay: 0 },
        maxTokensPerMicroBatch,
        gradientCheckpointing,
      });
      const metrics = await step.step(batch);
      runs.push({ before, after: await m.readParameters(), metrics });
      step.destroy();
    }
    const [stored, recomputed] = runs;
    for (const key of ["loss", "kl_loss", "entropy", "grad_norm"]) {
      assertClose([recomputed.metrics[key]], [stored.metrics[key]], {
        rtol: 1e-5,
        atol: 1e-6,
        label: `${maxTokensPerMicroBatch ?? "uncut"} ${key}`,
      });
    }
    assertSameUpdates(recomputed, stored);
  }
});

import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { type ModelConfig, parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { layerLinears } from "../../src/model/parameters.ts";
import {
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  createLoraAdapter,
  initLoraParameters,
  type LoraSettings,
  loraTargets,
  loraTensorName,
} from "../../src/model/lora.ts";
import { createModel, loadModel, type PolicyModel } from "../../src/model/policy.ts";
import { referenceLogits } from "../../src/model/transformer_reference.ts";
import { logSoftmaxRef } from "../../src/reference/softmax.ts";
import { newEid, validateExperience } from "../../src/buffer/experience.ts";
import { TrainStep } from "../../src/trainer/train_step.ts";
import { InputError } from "../../src/util/input_error.ts";
import { uniformArray } from "../../src/util/random.ts";
import { shapeSize } from "../../src/graph/tensor.ts";
import { copyWeights } from "../../src/sync/weight_copy.ts";
import { cloneModel } from "../../src/run/stage_policy.ts";
import {
  finiteDifferences,
  GRADCHECK_GPT2,
  GRADCHECK_LLAMA,
  GRADCHECK_SEQUENCES,
  GRADCHECK_VOCAB,
  logprobGradients,
} from "../_model_gradcheck.ts";
import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";
import { configure } from "../../src/util/registry.ts";
import { tinyFamilyConfigs } from "../_tiny_families.ts";

const VOCAB = GRADCHECK_VOCAB;
const SEQUENCES = GRADCHECK_SEQUENCES;
const SETTINGS: LoraSettings = { rank: 2, alpha: 3, targetModules: ["all-linear"] };

/** One tiny config of each family. */
const CONFIGS: Record<string, Record<string, unknown>> = {
  llama: GRADCHECK_LLAMA,
  gpt2: GRADCHECK_GPT2,
  ...tinyFamilyConfigs(VOCAB),
};

/**
 * A model of `raw` with an adapter attached: A as initialised, B zero or (`randomB`) uniform,
 * so that every A and B gradient is non-zero.
 */
async function adaptedModel(
  raw: Record<string, unknown>,
  seed: number,
  randomB: boolean,
): Promise<{ model: PolicyModel; base: Map<string, Float32Array<ArrayBuffer>> }> {
  const cfg = parseHfConfig(raw);
  const base = initParameters(cfg, seed, 0.4);
  const model = await createModel(raw, base);
  const values = initLoraParameters(loraTargets(cfg, SETTINGS.targetModules), 2, seed);
  if (randomB) {
    for (const [name, data] of values) {
      if (name.includes("lora_B")) data.set(uniformArray(data.length, seed + data.length, -.5, .5));
    }
  }
  model.attachLora(await createLoraAdapter(model.gpu, cfg, SETTINGS, values));
  return { model, base };
}

/** Base weights with every adapter merged in f64: W + s B A (Conv1D: W + s (B A)^T). */
function mergeF64(
  cfg: ModelConfig,
  base: ReadonlyMap<string, ArrayLike<number>>,
  adapter: ReadonlyMap<string, ArrayLike<number>>,
  settings: LoraSettings,
): Map<string, Float64Array> {
  const merged = new Map([...base].map(([k, v]) => [k, Float64Array.from(v)]));
  const s = settings.alpha / settings.rank;
  const r = settings.rank;
  for (const t of loraTargets(cfg, settings.targetModules)) {
    const a = adapter.get(loraTensorName(t.module, "A"))!;
    const b = adapter.get(loraTensorName(t.module, "B"))!;
    const w = merged.get(`${t.module}.weight`)!;
    for (let o = 0; o < t.outDim; o++) {
      for (let i = 0; i < t.inDim; i++) {
        let sum = 0;
        for (let k = 0; k < r; k++) sum += b[o * r + k] * a[k * t.inDim + i];
        w[t.conv1d ? i * t.outDim + o : o * t.inDim + i] += s * sum;
      }
    }
  }
  return merged;
}

/** Log p(seq[t+1] | seq[..t]) of each sequence under the f64 reference with `weights`. */
function referenceLogprobs(cfg: ModelConfig, weights: Map<string, Float64Array>): number[][] {
  return SEQUENCES.map((tokens) => {
    const logp = logSoftmaxRef(referenceLogits(cfg, weights, tokens), VOCAB);
    return tokens.slice(1).map((tok, t) => logp[t * VOCAB + tok]);
  });
}

for (const [label, raw] of Object.entries(CONFIGS)) {
  Deno.test(`${label}: LoRA A and B gradients match f64 finite differences`, async () => {
    const { model, base } = await adaptedModel(raw, 11, true);
    const cfg = model.config;
    const T = 8;
    const projection = uniformArray(2 * T, 5);
    const variables = model.trainableVariables();
    const gpuGrads = await logprobGradients(model, variables, projection, T);
    const adapter = new Map(
      [...await model.readLoraParameters()].map(([k, v]) => [k, Float64Array.from(v)]),
    );
    const objective = () =>
      referenceLogprobs(cfg, mergeF64(cfg, base, adapter, SETTINGS)).reduce(
        (total, row, b) => total + row.reduce((s, x, t) => s + projection[b * T + t] * x, 0),
        0,
      );
    variables.forEach((v, k) => {
      const numeric = finiteDifferences(adapter.get(v.name)!, objective);
      assertEquals(numeric.some((x) => Math.abs(x) > 1e-3), true, `${v.name} has a gradient`);
      assertClose(gpuGrads[k], numeric, { atol: 2e-5, rtol: 1e-4, label: `${label} ${v.name}` });
    });
    model.destroy();
  });

  Deno.test(`${label}: a fresh adapter gives the base model's log-probs exactly`, async () => {
    const { model, base } = await adaptedModel(raw, 12, false);
    const plain = await createModel(raw, base);
    assertEquals(await model.logprobs(SEQUENCES), await plain.logprobs(SEQUENCES));
    model.destroy();
    plain.destroy();
  });

  Deno.test(`${label}: the base model view gives the base's log-probs and shares its weights`, async () => {
    const { model, base } = await adaptedModel(raw, 14, true);
    const plain = await createModel(raw, base);
    const view = model.baseModel();
    assertEquals(view.lora, undefined);
    assertEquals(view.variables().map((v) => v.buffer), model.variables().map((v) => v.buffer));
    const baseLp = await plain.logprobs(SEQUENCES);
    assertEquals(await view.logprobs(SEQUENCES), baseLp);
    const adapted = await model.logprobs(SEQUENCES);
    assertEquals(adapted.flat().some((x, i) => Math.abs(x - baseLp.flat()[i]) > 1e-3), true);
    // Destroying the view leaves the adapted model's weights alive.
    view.destroy();
    assertEquals(await model.logprobs(SEQUENCES), adapted);
    assertThrows(() => plain.baseModel(), Error, "without a LoRA adapter");
    model.destroy();
    plain.destroy();
  });

  Deno.test(`${label}: training moves only the adapter; merged weights match base + adapter`, async () => {
    const { model, base } = await adaptedModel(raw, 13, false);
    const tokens = [1, 2, 3, 4, 5, 6];
    const [lp] = await model.logprobs([tokens]);
    const exp = {
      tokens,
      promptLength: 2,
      actionMask: tokens.map((_, t) => (t >= 2 ? 1 : 0)),
      logprobs: tokens.map((_, t) => (t >= 2 ? lp[t - 1] : 0)),
      reward: 1,
      info: { taskId: "t", runId: 0, policyVersion: 0, eid: newEid("t", 0) },
    };
    validateExperience(exp, "test");
    const trainer = new TrainStep(model, {
      policyLoss: configure(POLICY_LOSS_FN, "sft"),
      optimizer: { lr: 0.05 },
    });
    assertEquals(
      trainer.optimizer.params.map((p) => p.name),
      model.lora!.variables().map((v) => v.name),
    );
    for (let i = 0; i < 3; i++) await trainer.step([exp]);
    const after = await model.readParameters();
    for (const [name, data] of base) {
      assertEquals(new Uint8Array(after.get(name)!.buffer), new Uint8Array(data.buffer), name);
    }
    const merged = await createModel(raw, after);
    await model.gpuLock.run(() => model.mergeLoraInto(merged.params));
    const adapted = await model.logprobs(SEQUENCES);
    const plain = await createModel(raw, base);
    const baseLp = await plain.logprobs(SEQUENCES);
    assertEquals(adapted.flat().some((x, i) => Math.abs(x - baseLp.flat()[i]) > 1e-3), true);
    const mergedLp = await merged.logprobs(SEQUENCES);
    mergedLp.forEach((row, i) => assertClose(row, adapted[i], { atol: 1e-5, label: `seq ${i}` }));
    trainer.destroy();
    for (const m of [model, merged, plain]) m.destroy();
  });

  Deno.test(`${label}: a saved adapter merged independently gives rft's log-probs`, async () => {
    const { model } = await adaptedModel(raw, 14, true);
    const dir = await Deno.makeTempDir();
    try {
      await model.save(dir);
      const expected = await model.logprobs(SEQUENCES);
      // Independent reading: the safetensors header and F32 data, PEFT's names and shapes.
      const base = readSafetensorsF32(await Deno.readFile(`${dir}/model.safetensors`));
      const adapter = readSafetensorsF32(await Deno.readFile(`${dir}/${ADAPTER_WEIGHTS_FILE}`));
      const config = JSON.parse(await Deno.readTextFile(`${dir}/${ADAPTER_CONFIG_FILE}`));
      assertEquals([config.peft_type, config.r, config.lora_alpha], ["LORA", 2, 3]);
      const cfg = model.config;
      const { module: first, inDim, outDim } = layerLinears(cfg, 0).qkv[0];
      const a = adapter.get(`base_model.model.${first}.lora_A.weight`)!;
      const b = adapter.get(`base_model.model.${first}.lora_B.weight`)!;
      assertEquals([a.shape, b.shape], [[2, inDim], [outDim, 2]]);
      const settings = {
        rank: config.r,
        alpha: config.lora_alpha,
        targetModules: config.target_modules,
      };
      const merged = mergeF64(
        cfg,
        new Map([...base].map(([k, v]) => [k, v.data])),
        new Map([...adapter].map(([k, v]) => [k, v.data])),
        settings,
      );
      const independent = referenceLogprobs(cfg, merged);
      independent.forEach((row, i) => assertClose(expected[i], row, { atol: 1e-4, label: `${i}` }));
      // rft's own loaders: merged (serving, export) and attached (resuming) agree.
      const loadedMerged = await loadModel(dir);
      assertEquals(loadedMerged.lora, undefined);
      const loadedAttached = await loadModel(dir, { adapter: "attach" });
      assertEquals(loadedAttached.lora?.targets.length, model.lora!.targets.length);
      // A base directory and the adapter given apart (`--adapter DIR` of serve, generate, export).
      const plain = await createModel(raw, await model.readParameters());
      await plain.save(`${dir}/base`);
      plain.destroy();
      const loadedApart = await loadModel(`${dir}/base`, { adapterDir: dir });
      for (const loaded of [loadedMerged, loadedAttached, loadedApart]) {
        const lp = await loaded.logprobs(SEQUENCES);
        lp.forEach((row, i) => assertClose(row, expected[i], { atol: 1e-5, label: `load ${i}` }));
        loaded.destroy();
      }
    } finally {
      model.destroy();
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("the explorer's clone shares the frozen base; each weight sync copies the adapter", async () => {
  const raw = CONFIGS.llama;
  const { model: trainer } = await adaptedModel(raw, 15, true);
  const explorer = await cloneModel(trainer);
  assertEquals(explorer.variables().map((v) => v.buffer), trainer.variables().map((v) => v.buffer));
  const adapterBuffers = new Set(trainer.lora!.variables().map((v) => v.buffer));
  assertEquals(explorer.lora!.variables().some((v) => adapterBuffers.has(v.buffer)), false);
  const close = async (label: string) => {
    const [expected, actual] = [
      await trainer.logprobs(SEQUENCES),
      await explorer.logprobs(SEQUENCES),
    ];
    actual.forEach((row, i) =>
      assertClose(row, expected[i], { atol: 1e-5, label: `${label} ${i}` })
    );
  };
  await close("clone");
  // New adapter values on the trainer: the explorer differs until the sync.
  const b = trainer.lora!.variables()[1];
  trainer.gpu.device.queue.writeBuffer(b.buffer, 0, uniformArray(shapeSize(b.shape), 99, -1, 1));
  trainer.gpu.variableTextures.written(b.buffer); // as every writer outside a graph must
  const before = await explorer.logprobs(SEQUENCES);
  const moved = await trainer.logprobs(SEQUENCES);
  assertEquals(moved.flat().some((x, i) => Math.abs(x - before.flat()[i]) > 1e-3), true);
  let stamped = false;
  await copyWeights(trainer, explorer, () => stamped = true);
  assertEquals(stamped, true);
  await close("sync");
  // A model without the adapter cannot take the sync: it names what it lacks.
  const plain = await createModel(raw, await trainer.readParameters());
  await assertRejects(
    () => copyWeights(trainer, plain),
    Error,
    "the explorer's model has no trained variable",
  );
  explorer.destroy();
  trainer.destroy();
  plain.destroy();
});

Deno.test("target modules: PEFT names of each family, all-linear, unknown names refused", () => {
  const llama = parseHfConfig(CONFIGS.llama);
  const gpt2 = parseHfConfig(CONFIGS.gpt2);
  assertEquals(loraTargets(llama, ["all-linear"]).length, 14);
  assertEquals(
    loraTargets(llama, ["q_proj", "v_proj"]).map((t) => [t.module, t.inDim, t.outDim]),
    [
      ["model.layers.0.self_attn.q_proj", 8, 8],
      ["model.layers.0.self_attn.v_proj", 8, 4],
      ["model.layers.1.self_attn.q_proj", 8, 8],
      ["model.layers.1.self_attn.v_proj", 8, 4],
    ],
  );
  assertEquals(
    loraTargets(gpt2, ["c_attn", "c_fc"]).map((t) => [t.module, t.inDim, t.outDim, t.conv1d]),
    [
      ["transformer.h.0.attn.c_attn", 8, 24, true],
      ["transformer.h.0.mlp.c_fc", 8, 32, true],
      ["transformer.h.1.attn.c_attn", 8, 24, true],
      ["transformer.h.1.mlp.c_fc", 8, 32, true],
    ],
  );
  // c_proj names the attention's and the MLP's output projections.
  assertEquals(loraTargets(gpt2, ["c_proj"]).length, 4);
  assertThrows(
    () => loraTargets(gpt2, ["q_proj"], "model.lora_configs[0].target_modules"),
    InputError,
    'model.lora_configs[0].target_modules: expected all-linear or names of gpt2\'s linear modules (c_attn, c_proj, c_fc), found "q_proj"',
  );
});

/** Tensors of a safetensors file (all F32), read without rft's reader. */
function readSafetensorsF32(
  bytes: Uint8Array,
): Map<string, { shape: number[]; data: Float32Array }> {
  const headerLength = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
  const out = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, info] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    const { dtype, shape, data_offsets: [start, end] } = info as {
      dtype: string;
      shape: number[];
      data_offsets: [number, number];
    };
    assertEquals(dtype, "F32", name);
    const data = new Float32Array(
      bytes.slice(8 + headerLength + start, 8 + headerLength + end).buffer,
    );
    out.set(name, { shape, data });
  }
  return out;
}

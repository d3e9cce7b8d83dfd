/**
 * Batch-1 decoding on the GPU path (the test adapter presented as a GPU, so the decode graph takes
 * the GEMV kernels and their fusions): for every family of src/model/families.ts, greedy tokens
 * are the f64 reference's argmax, and the attention block's norm and q/k/v products run as one
 * GEMV (`normedQkvGemv`) exactly where the family allows it (RMSNorm, no q/k norms; biases,
 * GQA and a fused qkv module included) and as their own dispatches elsewhere; LoRA adapters on q
 * or v keep the products, one on o_proj does not, both as the CPU adapter's path decodes; bf16 and
 * f16 weights are read as stored by both GEMVs (the MLP's too), as the CPU adapter's path decodes
 * them; a decode step is at most 8 dispatches per decoder layer.
 */

import { getGpu } from "../../src/gpu/device.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { createLoraAdapter, initLoraParameters, loraTargets } from "../../src/model/lora.ts";
import { createModel, type PolicyModel } from "../../src/model/policy.ts";
import { copyModel } from "../../src/model/weight_transfer.ts";
import { uniformArray } from "../../src/util/random.ts";
import {
  decodeDispatches,
  presentedAsGpu,
  recordedDispatches,
} from "../../bench/decode_dispatches.ts";
import assert from "node:assert/strict";
import { assertEquals } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { checkGreedyTokens } from "../_greedy_reference.ts";
import { tinyFamilyConfigs } from "../_tiny_families.ts";

const VOCAB = 29;

/**
 * Llama-layout sizes with head_dim 8 (RoPE and the cache writes in one dispatch), every product
 * under the 2^16 flops from which GPUs autotune: the presented GPU takes each class's default
 * kernel, timing nothing and writing nothing to the shared autotune cache under the test
 * adapter's key (tests run in one process: no `RFT_AUTOTUNE=0` here).
 */
const LLAMA_SIZES = {
  hidden_size: 32,
  intermediate_size: 40,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  vocab_size: VOCAB,
  max_position_embeddings: 128,
};

const FAMILY_CONFIGS = tinyFamilyConfigs(VOCAB);

/** Every family's tiny config, and whether its norm and q/k/v products run as one GEMV. */
const FAMILIES: Record<string, { raw: Record<string, unknown>; fused: boolean }> = {
  "llama (attention_bias)": {
    raw: { ...LLAMA_SIZES, model_type: "llama", attention_bias: true },
    fused: true,
  },
  "qwen2 (q/k/v biases, GQA 2:1, tied)": {
    raw: { ...LLAMA_SIZES, model_type: "qwen2", tie_word_embeddings: true },
    fused: true,
  },
  "mistral (window 3)": {
    raw: { ...LLAMA_SIZES, model_type: "mistral", sliding_window: 3 },
    fused: true,
  },
  "qwen3 (q/k norms over heads)": {
    raw: { ...LLAMA_SIZES, model_type: "qwen3", head_dim: 8 },
    fused: false,
  },
  "gpt2 (LayerNorm, fused Conv1D qkv)": {
    raw: {
      model_type: "gpt2",
      n_embd: 16,
      n_layer: 2,
      n_head: 2,
      n_positions: 64,
      vocab_size: VOCAB,
      layer_norm_epsilon: 1e-5,
    },
    fused: false,
  },
  ...Object.fromEntries(
    Object.entries(FAMILY_CONFIGS).map(([label, raw]) => {
      // q/k norms (Gemma 3, OLMo 2) and LayerNorms (StableLM) keep the products.
      const fused = !["gemma3_text", "olmo2", "stablelm"].includes(raw.model_type as string);
      return [label, { raw, fused }];
    }),
  ),
};

/** The families' model_types the table covers: every row of families.ts. */
const COVERED = ["llama", "qwen2", "mistral", "qwen3", "gpt2", "phi3", "olmo2", "smollm3"]
  .concat(["granite", "stablelm", "gemma", "gemma2", "gemma3_text"]);

const PROMPTS = [[3, 1, 4, 1, 5, 9, 2], [6, 5], [3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4]];

const GREEDY = { temperature: 0, maxTokens: 10, stop: [] };

/** Random weights of `raw`, biases too (they start at 0), so a misplaced bias changes tokens. */
function randomParameters(raw: Record<string, unknown>): Map<string, Float32Array<ArrayBuffer>> {
  const params = initParameters(parseHfConfig(raw), 11, 0.5);
  for (const [name, data] of params) {
    if (name.endsWith(".bias")) data.set(uniformArray(data.length, data.length, -0.5, 0.5));
  }
  return params;
}

/** A model of `raw` ({@link randomParameters}) on the test adapter presented as a GPU. */
async function gpuPathModel(raw: Record<string, unknown>): Promise<PolicyModel> {
  const gpu = presentedAsGpu(await getGpu());
  return await createModel(raw, randomParameters(raw), { gpu });
}

/**
 * Each prompt decoded greedily alone (batch 1), and whether the q/k/v GEMV and the MLP's gated
 * GEMV (`normedGatedGemv`) were dispatched meanwhile.
 */
async function decodeAlone(model: PolicyModel) {
  const samples: { prompt: number; tokens: number[]; logprobs: number[] }[] = [];
  const kernels = await recordedDispatches(async () => {
    for (const [i, prompt] of PROMPTS.entries()) {
      const [sample] = await model.generate([prompt], GREEDY);
      samples.push({ ...sample, prompt: i });
    }
  });
  const gated = kernels.some((k) => k.startsWith("gemv") && k.includes("GATED=1"));
  return { samples, qkvGemv: kernels.some((k) => k.startsWith("gemv_qkv")), gatedGemv: gated };
}

Deno.test("the GPU-path table covers every model_type of families.ts", async () => {
  const { SUPPORTED_MODEL_TYPES } = await import("../../src/model/families.ts");
  assertEquals([...COVERED].sort(), [...SUPPORTED_MODEL_TYPES].sort());
  const types = new Set(Object.values(FAMILIES).map(({ raw }) => raw.model_type));
  assertEquals([...types].sort(), [...COVERED].sort());
});

for (const [label, { raw, fused }] of Object.entries(FAMILIES)) {
  const how = fused ? "one GEMV" : "their own dispatches";
  Deno.test(`GPU path, ${label}: greedy tokens are the reference's argmax; norm and q/k/v as ${how}`, async () => {
    const model = await gpuPathModel(raw);
    try {
      const { samples, qkvGemv } = await decodeAlone(model);
      assertEquals(qkvGemv, fused, "the norm and q/k/v GEMV ran");
      for (const s of samples) assertEquals(s.tokens.length, GREEDY.maxTokens);
      const checked = await checkGreedyTokens(model, PROMPTS, samples);
      assert(checked > 20, `only ${checked} positions had a clear argmax`);
    } finally {
      model.destroy();
    }
  });
}

/**
 * Asserts that `prepare` applied to a model of the qwen2 row on the GPU path and to one on the CPU
 * adapter's path gives the same greedy tokens and log-probs, and whether the q/k/v and the gated
 * GEMVs ran on the GPU path.
 */
async function assertAsCpuPath(
  what: string,
  prepare: (model: PolicyModel) => Promise<PolicyModel>,
  ran: { qkvGemv: boolean; gatedGemv: boolean },
) {
  const raw = FAMILIES["qwen2 (q/k/v biases, GQA 2:1, tied)"].raw;
  const decode = async (base: PolicyModel) => {
    const model = await prepare(base);
    try {
      return await decodeAlone(model);
    } finally {
      model.destroy();
    }
  };
  const gpuPath = await decode(await gpuPathModel(raw));
  const cpuPath = await decode(await createModel(raw, randomParameters(raw)));
  assertEquals({ qkvGemv: gpuPath.qkvGemv, gatedGemv: gpuPath.gatedGemv }, ran, what);
  gpuPath.samples.forEach((s, i) => {
    assertEquals(s.tokens, cpuPath.samples[i].tokens, `${what}, prompt ${i}`);
    assertClose(s.logprobs, cpuPath.samples[i].logprobs, { atol: 1e-4, label: `${what} ${i}` });
  });
}

Deno.test("GPU path with LoRA: adapters on q and v keep the products, on o_proj not; tokens as the CPU adapter's", async () => {
  const cfg = parseHfConfig(FAMILIES["qwen2 (q/k/v biases, GQA 2:1, tied)"].raw);
  for (const [modules, fused] of [[["q_proj", "v_proj"], false], [["o_proj"], true]] as const) {
    const settings = { rank: 2, alpha: 3, targetModules: [...modules] };
    const values = initLoraParameters(loraTargets(cfg, settings.targetModules), 2, 5);
    for (const [name, data] of values) {
      if (name.includes("lora_B")) data.set(uniformArray(data.length, data.length, -0.5, 0.5));
    }
    await assertAsCpuPath(`adapters on ${modules}`, async (model) => {
      model.attachLora(await createLoraAdapter(model.gpu, cfg, settings, values));
      return model;
    }, { qkvGemv: fused, gatedGemv: true });
  }
});

Deno.test("GPU path with bf16 and f16 weights: the q/k/v and gated GEMVs read them as stored; tokens as the CPU adapter's", async () => {
  for (const dtype of ["bf16", "f16"] as const) {
    await assertAsCpuPath(`${dtype} weights`, async (model) => {
      const copy = await copyModel(model, dtype);
      model.destroy();
      return copy;
    }, { qkvGemv: true, gatedGemv: true });
  }
});

Deno.test("GPU path: a batch-1 decode step is at most 8 dispatches per decoder layer", async () => {
  const gpu = presentedAsGpu(await getGpu());
  const llama = FAMILIES["llama (attention_bias)"].raw;
  const { perStep, perLayer, layerKernels } = await decodeDispatches(llama, 2, gpu);
  assert(perLayer <= 8, `${perLayer} dispatches per layer: ${layerKernels.join(", ")}`);
  assert(layerKernels[0].startsWith("gemv_qkv"), `the layer starts with ${layerKernels[0]}`);
  // The embedding, final norm, LM head and sampler besides the layers.
  assertEquals(perStep, 2 * perLayer + 5);
});

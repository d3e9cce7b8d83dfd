import { assertEquals, assertRejects } from "../_asserts.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { parameterSpecs } from "../../src/model/parameters.ts";
import { createModel, loadModel } from "../../src/model/policy.ts";
import { buildLogits } from "../../src/model/transformer.ts";
import { normedGatedGemvMisfit } from "../../src/ops/normed_gated_gemv.ts";
import { padBatch } from "../../src/model/padded_batch.ts";
import { referenceLogits, type ReferenceWeights } from "../../src/model/transformer_reference.ts";
import { logSoftmaxRef } from "../../src/reference/softmax.ts";
import { uniformArray } from "../../src/util/random.ts";
import { assertClose } from "../_assert_close.ts";
import {
  finiteDifferences,
  GRADCHECK_GPT2,
  GRADCHECK_LLAMA,
  GRADCHECK_SEQUENCES,
  GRADCHECK_VOCAB,
  logprobGradients,
} from "../_model_gradcheck.ts";
import { tinyFamilyConfigs, tinyGemma3Config } from "../_tiny_families.ts";

const VOCAB = GRADCHECK_VOCAB;

/** Tiny configs covering every architectural switch. */
const CONFIGS: Record<string, Record<string, unknown>> = {
  "llama (GQA, untied)": GRADCHECK_LLAMA,
  "qwen2 (q/k/v bias, tied)": {
    model_type: "qwen2",
    hidden_size: 8,
    intermediate_size: 10,
    num_hidden_layers: 1,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-6,
    rope_theta: 1000000,
    vocab_size: VOCAB,
    tie_word_embeddings: true,
  },
  "qwen3 (q/k norm, head_dim != hidden/heads)": {
    model_type: "qwen3",
    hidden_size: 8,
    head_dim: 6,
    intermediate_size: 12,
    num_hidden_layers: 1,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    vocab_size: VOCAB,
    tie_word_embeddings: true,
  },
  "gpt2 untied": {
    model_type: "gpt2",
    n_embd: 8,
    n_layer: 1,
    n_head: 2,
    n_positions: 16,
    vocab_size: VOCAB,
    layer_norm_epsilon: 1e-5,
    activation_function: "gelu_new",
    tie_word_embeddings: false,
  },
  "gpt2": GRADCHECK_GPT2,
  ...tinyFamilyConfigs(VOCAB),
  "gemma 3 with a final logit softcap": tinyGemma3Config(VOCAB, 2, { final_logit_softcapping: 2 }),
};

const SEQUENCES = GRADCHECK_SEQUENCES;

/** Random parameters with a larger spread than HF's 0.02 so every path matters. */
function parameters(raw: Record<string, unknown>, seed: number) {
  const params = initParameters(parseHfConfig(raw), seed, 0.4);
  // Norm weights and biases start at 1 / 0: perturb them so their gradients are tested too.
  for (const [name, data] of params) {
    if (name.includes("norm") || name.includes("ln_") || name.endsWith(".bias")) {
      const noise = uniformArray(data.length, seed + data.length, -0.3, 0.3);
      for (let i = 0; i < data.length; i++) data[i] += noise[i];
    }
  }
  return params;
}

function toReference(params: Map<string, Float32Array>): ReferenceWeights {
  return new Map([...params].map(([k, v]) => [k, Float64Array.from(v)]));
}

/** sum over sequences and positions of R[b,t] * log p(seq[t+1] | seq[..t]) in f64. */
function referenceObjective(
  raw: Record<string, unknown>,
  weights: ReferenceWeights,
  projection: Float32Array,
  seq: number,
): number {
  const cfg = parseHfConfig(raw);
  let total = 0;
  SEQUENCES.forEach((tokens, b) => {
    const logp = logSoftmaxRef(referenceLogits(cfg, weights, tokens), VOCAB);
    for (let t = 0; t + 1 < tokens.length; t++) {
      total += projection[b * seq + t] * logp[t * VOCAB + tokens[t + 1]];
    }
  });
  return total;
}

for (const [label, raw] of Object.entries(CONFIGS)) {
  Deno.test(`${label}: logits of a padded batch match the f64 reference`, async () => {
    const params = parameters(raw, 7);
    const model = await createModel(raw, params);
    const T = 9;
    const g = new Graph();
    const input = (n: string) => g.input([2, T], "i32", n);
    const inputs = {
      ids: input("ids"),
      positions: input("positions"),
      segments: input("segments"),
    };
    const logits = buildLogits(model.config, model.weights(g), inputs);
    // From position 3 on only (the LM head skipped before it).
    const from = 3;
    const tail = buildLogits(model.config, model.weights(g), inputs, from);
    assertEquals(tail.shape, [2, T - from, VOCAB]);
    // The inference build: residuals added in place by the projections.
    const inference = buildLogits(model.config, model.weights(g), inputs, 0, { inference: true });
    // And with the norms and SwiGLU computed in the products' fills (where rows allow).
    const prologues = buildLogits(model.config, model.weights(g), inputs, 0, {
      inference: true,
      prologueProducts: true,
    });
    // And with each MLP's norm, gate/up products and SwiGLU in one gemv (where the weights fit).
    const fits = (n: number, k: number) => normedGatedGemvMisfit(model.gpu, n, k) === undefined;
    const gatedGemv = buildLogits(model.config, model.weights(g), inputs, 0, {
      inference: true,
      gatedGemv: fits,
    });
    const exe = await compileGraph(model.gpu, [logits, tail, inference, prologues, gatedGemv]);
    const cfg = model.config;
    assertEquals(
      exe.dispatches.some((d) => d.label.startsWith("normed_gated_gemv")),
      "gate" in cfg.names.mlpIn && cfg.names.preMlpNorm !== undefined &&
        cfg.norm.kind === "rms_norm" && fits(cfg.intermediateSize, cfg.hiddenSize),
      "the gated gemv runs where the MLP's RMSNorm and weights fit it",
    );
    const { ids, positions, segments } = padBatch(SEQUENCES, T, VOCAB);
    await exe.run(
      new Map([[inputs.ids, ids], [inputs.positions, positions], [inputs.segments, segments]]),
    );
    const [out, outTail, outInference, outPrologues, outGatedGemv] = await exe.read([
      logits,
      tail,
      inference,
      prologues,
      gatedGemv,
    ]);
    SEQUENCES.forEach((s, b) => {
      const expected = referenceLogits(model.config, toReference(params), s);
      const rows = [b * T * VOCAB, (b * T + s.length) * VOCAB];
      const actual = out.subarray(...rows);
      assertClose(actual, expected, { atol: 1e-5, rtol: 1e-4, label: `${label} seq ${b}` });
      assertClose(outInference.subarray(...rows), expected, {
        atol: 1e-5,
        rtol: 1e-4,
        label: `${label} seq ${b} inference build`,
      });
      assertClose(outPrologues.subarray(...rows), expected, {
        atol: 1e-5,
        rtol: 1e-4,
        label: `${label} seq ${b} prologue products`,
      });
      assertClose(outGatedGemv.subarray(...rows), expected, {
        atol: 1e-5,
        rtol: 1e-4,
        label: `${label} seq ${b} gated gemv`,
      });
      const kept = T - from;
      const actualTail = outTail.subarray(b * kept * VOCAB, (b * kept + s.length - from) * VOCAB);
      assertClose(actualTail, expected.subarray(from * VOCAB), {
        atol: 1e-5,
        rtol: 1e-4,
        label: `${label} seq ${b} from ${from}`,
      });
    });
    exe.destroy();
    model.destroy();
  });

  Deno.test(`${label}: packed sequences give the same logits as separate ones`, async () => {
    const params = parameters(raw, 8);
    const model = await createModel(raw, params);
    const packed = SEQUENCES.flat();
    const g = new Graph();
    const input = (n: string) => g.input([1, packed.length], "i32", n);
    const inputs = {
      ids: input("ids"),
      positions: input("positions"),
      segments: input("segments"),
    };
    const logits = buildLogits(model.config, model.weights(g), inputs);
    const exe = await compileGraph(model.gpu, [logits]);
    await exe.run(
      new Map([
        [inputs.ids, Int32Array.from(packed)],
        [inputs.positions, Int32Array.from(SEQUENCES.flatMap((s) => s.map((_, t) => t)))],
        [inputs.segments, Int32Array.from(SEQUENCES.flatMap((s, b) => s.map(() => b)))],
      ]),
    );
    const [out] = await exe.read([logits]);
    const expected = SEQUENCES.flatMap((s) =>
      Array.from(referenceLogits(model.config, toReference(params), s))
    );
    assertClose(out, expected, { atol: 1e-5, rtol: 1e-4, label: `${label} packed` });
    exe.destroy();
    model.destroy();
  });

  Deno.test(`${label}: every parameter gradient matches f64 finite differences`, async () => {
    const params = parameters(raw, 9);
    const model = await createModel(raw, params);
    const T = 8;
    const projection = uniformArray(2 * T, 5);
    const specs = parameterSpecs(model.config);
    const variables = specs.map((s) => model.params.get(s.name)!);
    const gpuGrads = await logprobGradients(model, variables, projection, T);
    const weights = toReference(params) as Map<string, Float64Array>;
    specs.forEach((spec, k) => {
      const numeric = finiteDifferences(
        weights.get(spec.name)!,
        () => referenceObjective(raw, weights, projection, T),
      );
      assertClose(gpuGrads[k], numeric, {
        atol: 2e-5,
        rtol: 1e-4,
        label: `${label} d/d ${spec.name}`,
      });
    });
    model.destroy();
  });
}

Deno.test("a saved model reloads bit-identically and gives the same logprobs", async () => {
  const raw = CONFIGS["qwen2 (q/k/v bias, tied)"];
  const model = await createModel(raw, parameters(raw, 3));
  const dir = await Deno.makeTempDir();
  await model.save(dir);
  const again = await loadModel(dir);
  const [a, b] = [await model.readParameters(), await again.readParameters()];
  assertEquals([...a.keys()].sort(), [...b.keys()].sort());
  for (const [name, data] of a) {
    assertEquals(new Uint8Array(b.get(name)!.buffer), new Uint8Array(data.buffer), name);
  }
  const lp1 = await model.logprobs(SEQUENCES, { temperature: 0.7 });
  const lp2 = await again.logprobs(SEQUENCES, { temperature: 0.7 });
  assertEquals(lp2, lp1);
  // And they are the reference's log-probs at that temperature.
  const ref = SEQUENCES.map((s) => {
    const logits = referenceLogits(model.config, toReference(a), s).map((v) => v / 0.7);
    const logp = logSoftmaxRef(logits, VOCAB);
    return s.slice(1).map((tok, t) => logp[t * VOCAB + tok]);
  });
  lp1.forEach((row, i) => assertClose(row, ref[i], { atol: 1e-5, rtol: 1e-4, label: `lp ${i}` }));
  model.destroy();
  again.destroy();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("loading names the missing tensor and a wrong shape", async () => {
  const raw = CONFIGS["llama (GQA, untied)"];
  const model = await createModel(raw, parameters(raw, 4));
  const dir = await Deno.makeTempDir();
  await model.save(dir);
  const config = { ...raw, num_hidden_layers: 3 };
  await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify(config));
  await assertRejects(
    () => loadModel(dir),
    Error,
    'tensor "model.layers.2.input_layernorm.weight" is missing from the checkpoint',
  );
  await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify({ ...raw, intermediate_size: 14 }));
  await assertRejects(
    () => loadModel(dir),
    Error,
    'tensor "model.layers.0.mlp.gate_proj.weight" has shape [12,8]; config.json implies [14,8]',
  );
  model.destroy();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("logprobs from an index leave whole buckets before it uncomputed, the rest as before", async () => {
  const raw = CONFIGS["qwen2 (q/k/v bias, tied)"];
  const model = await createModel(raw, parameters(raw, 9));
  const sequences = [37, 21].map((n, s) =>
    Array.from({ length: n }, (_, t) => (t * 7 + s * 3 + 1) % VOCAB)
  );
  const full = await model.logprobs(sequences);
  const tail = await model.logprobs(sequences, { from: 20 });
  tail.forEach((row, i) => {
    assertEquals(row.length, full[i].length);
    assertEquals(row.slice(0, 16).every(Number.isNaN), true, `row ${i} before 16`);
    assertClose(row.slice(16), full[i].slice(16), { atol: 1e-5, rtol: 1e-5, label: `row ${i}` });
  });
  model.destroy();
});

Deno.test("concurrent logprobs calls on one model do not mix their results", async () => {
  const raw = CONFIGS["qwen2 (q/k/v bias, tied)"];
  const model = await createModel(raw, parameters(raw, 6));
  const one = await Promise.all(SEQUENCES.map((s) => model.logprobs([s])));
  const serial = [];
  for (const s of SEQUENCES) serial.push(await model.logprobs([s]));
  assertEquals(one, serial);
  model.destroy();
});

Deno.test("positionStats: log-probs, entropies and nec match the f64 reference logits", async () => {
  const raw = CONFIGS["qwen2 (q/k/v bias, tied)"];
  const params = parameters(raw, 11);
  const model = await createModel(raw, params);
  const sequences = [[3, 9, 1, 12, 2], [7, 7, 0]];
  const [logp, entropy, nec] = await model.positionStats(sequences, ["logprob", "entropy", "nec"]);
  assertEquals(await model.logprobs(sequences), logp, "logprobs is the logprob stat");
  sequences.forEach((tokens, i) => {
    const lp = logSoftmaxRef(referenceLogits(model.config, toReference(params), tokens), VOCAB);
    const expected = { logp: [] as number[], entropy: [] as number[], nec: [] as number[] };
    for (let t = 0; t + 1 < tokens.length; t++) {
      const row = lp.subarray(t * VOCAB, (t + 1) * VOCAB);
      const p = Array.from(row, Math.exp);
      const h = -p.reduce((s, x, v) => s + x * row[v], 0);
      const p2 = p.reduce((s, x) => s + x * x, 0);
      expected.logp.push(row[tokens[t + 1]]);
      expected.entropy.push(h);
      expected.nec.push(h * p2 + p.reduce((s, x, v) => s + x * x * row[v], 0));
    }
    const tol = { atol: 1e-5, rtol: 1e-4 };
    assertClose(logp[i], expected.logp, { ...tol, label: `logp ${i}` });
    assertClose(entropy[i], expected.entropy, { ...tol, label: `entropy ${i}` });
    assertClose(nec[i], expected.nec, { ...tol, label: `nec ${i}` });
  });
  model.destroy();
});

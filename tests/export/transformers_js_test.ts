import { assertEquals } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { policyOnnx } from "../../src/export/export_onnx.ts";
import { exportTransformersJs } from "../../src/export/export_transformers_js.ts";
import { concatBytes } from "../../src/export/onnx_proto.ts";
import { pastNames, presentNames } from "../../src/export/onnx_kv_cache.ts";
import { CharTokenizer } from "../../src/model/char_tokenizer.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { kvLayout } from "../../src/model/model_config.ts";
import { createModel, loadModel } from "../../src/model/policy.ts";
import { hfCharTokenizerFiles } from "../../src/export/hf_char_tokenizer.ts";
import { CONFIGS, randomParameters, VOCAB } from "./_configs.ts";
import { int64NodeTensor, localModelId, ortNode, transformers } from "./_transformers_js.ts";

/** 3 special tokens + 14 characters = VOCAB ids. */
const TOKENIZER = new CharTokenizer("+0123456789=ab");
const IDS = { bos_token_id: 1, eos_token_id: 2, pad_token_id: 0 };
const PROMPTS = ["12+34=", "9+1=", "a+7b="];
const NEW_TOKENS = 8;

/** The families transformers.js runs (qwen2's export keeps its weights as external data). */
const FAMILIES = [
  "llama (GQA 4/2, untied)",
  "qwen2 (q/k/v bias, GQA 6/2, tied)",
  "qwen3 (q/k norm, head_dim 6 != 12 / 4, GQA 4/1)",
  "llama 3.2 (llama3 rope scaling, tied)",
  "gemma 3 (window 4, sliding and full layers)",
  "phi3 (fused qkv and gate_up, window 3)",
  "olmo2 (post-norms, q/k norms over projections)",
  "gemma (1 + w norms, head_dim 12, GELU-tanh)",
  "gemma 2 (alternating windows, score and final softcaps)",
  "smollm3 (NoPE every second layer)",
  "granite (embedding, attention, residual and logit multipliers)",
  "phi-4-mini (partial rotary 0.75, longrope)",
  "stablelm (LayerNorms, q/k/v biases, partial rotary 0.25)",
  "gpt2 (tied)",
];

for (const label of FAMILIES) {
  Deno.test(`${label}: transformers.js pipeline, and AutoTokenizer + AutoModelForCausalLM.generate, give rft's greedy tokens`, async () => {
    const raw = { ...CONFIGS[label], ...IDS };
    const model = await createModel(raw, randomParameters(parseHfConfig(raw), 23), {
      tokenizer: TOKENIZER,
    });
    const dir = await Deno.makeTempDir();
    try {
      const externalData = label.startsWith("qwen2");
      const result = await exportTransformersJs(model, dir, { externalData });
      assertEquals(
        result.onnx[0].dataPath,
        externalData ? `${dir}/onnx/model.onnx_data` : undefined,
      );
      const config = JSON.parse(await Deno.readTextFile(`${dir}/config.json`));
      assertEquals(
        config["transformers.js_config"]?.use_external_data_format,
        externalData ? { "model.onnx": 1 } : undefined,
      );
      const generation = JSON.parse(await Deno.readTextFile(`${dir}/generation_config.json`));
      assertEquals(generation, IDS);

      const greedy = await model.generate(PROMPTS, { temperature: 0, maxTokens: NEW_TOKENS });
      const id = localModelId(dir);
      const tokenizer = await transformers.AutoTokenizer.from_pretrained(id);
      const tjsModel = await transformers.AutoModelForCausalLM.from_pretrained(id);
      // As transformers.js documents it: the tokenizer's defaults (special tokens asked for).
      const inputs = tokenizer(PROMPTS, { padding: true });
      const width = inputs.input_ids.dims[1];
      const out = await tjsModel.generate({
        ...inputs,
        max_new_tokens: NEW_TOKENS,
        do_sample: false,
      }) as transformers.Tensor;
      const rows = out.tolist() as bigint[][];
      PROMPTS.forEach((prompt, b) => {
        const ids = TOKENIZER.encode(prompt);
        const padded = [...Array(width - ids.length).fill(0), ...ids];
        assertEquals(rows[b].slice(0, width).map(Number), padded, `${label} prompt ${b}`);
        const expected = greedy[b].tokens;
        const generated = rows[b].slice(width, width + expected.length).map(Number);
        assertEquals(generated, expected, `${label} generate row ${b}`);
      });

      const pipe = await transformers.pipeline("text-generation", id);
      const texts = await pipe(PROMPTS, { max_new_tokens: NEW_TOKENS, do_sample: false });
      PROMPTS.forEach((prompt, b) => {
        const text = TOKENIZER.decode(greedy[b].tokens, { skipSpecialTokens: true });
        let generated = (texts[b] as { generated_text: string }[])[0].generated_text;
        // A batch row that stopped on EOS goes on past it in transformers.js (the EOS itself,
        // a special token, leaves no text): compare up to where rft stopped.
        if (greedy[b].finishReason === "stop") {
          generated = generated.slice(0, (prompt + text).length);
        }
        assertEquals(generated, prompt + text, `${label} pipeline prompt ${b}`);
      });
      await pipe.dispose();
      await tjsModel.dispose();
    } finally {
      await Deno.remove(dir, { recursive: true });
      model.destroy();
    }
  });
}

/** transformers.js's position_ids for the last `seq` of `mask` rows: cumsum - 1, 1 on padding. */
function positionIds(mask: number[][], seq: number): number[] {
  return mask.flatMap((row) => {
    let count = 0;
    const positions = row.map((m) => (m ? count++ : 1));
    return positions.slice(row.length - seq);
  });
}

/** Index of the largest of `count` values from `offset`. */
function argmax(values: Float32Array, offset: number, count: number): number {
  let best = 0;
  for (let i = 1; i < count; i++) if (values[offset + i] > values[offset + best]) best = i;
  return best;
}

for (const [label, raw] of Object.entries(CONFIGS)) {
  Deno.test(`${label}: KV-cached logits equal the full-sequence export's at every step`, async () => {
    const cfg = parseHfConfig(raw);
    const params = randomParameters(cfg, 31);
    const session = (kvCache: boolean) =>
      ortNode.InferenceSession.create(concatBytes(policyOnnx(cfg, params, { kvCache }).model));
    const [cached, full] = [await session(true), await session(false)];
    const layers = cfg.numLayers;
    assertEquals(cached.inputNames.slice(0, 3), ["input_ids", "attention_mask", "position_ids"]);
    assertEquals(cached.outputNames, [
      "logits",
      ...Array.from({ length: layers }, (_, l) => Object.values(presentNames(l))).flat(),
    ]);
    // Two rows, left-padded: lengths 5 and 3.
    const ids = [[3, 16, 0, 7, 7], [0, 0, 5, 2, 11]];
    const mask = [[1, 1, 1, 1, 1], [0, 0, 1, 1, 1]];
    const { kvHeads, headDim } = kvLayout(cfg);
    let past: Record<string, ortNode.Tensor> = {};
    for (let l = 0; l < layers; l++) {
      for (const name of Object.values(pastNames(l))) {
        past[name] = new ortNode.Tensor("float32", new Float32Array(0), [2, kvHeads, 0, headDim]);
      }
    }
    let fresh = ids;
    for (let step = 0; step < 6; step++) {
      const seq = fresh[0].length;
      const out = await cached.run({
        input_ids: int64NodeTensor(fresh.flat(), 2),
        attention_mask: int64NodeTensor(mask.flat(), 2),
        position_ids: int64NodeTensor(positionIds(mask, seq), 2),
        ...past,
      });
      const total = ids[0].length;
      const reference = await full.run({
        input_ids: int64NodeTensor(ids.flat(), 2),
        attention_mask: int64NodeTensor(mask.flat(), 2),
      });
      const actual = out.logits.data as Float32Array;
      const expected = reference.logits.data as Float32Array;
      const next: number[][] = [];
      for (let b = 0; b < 2; b++) {
        for (let t = 0; t < seq; t++) {
          if (!mask[b][total - seq + t]) continue; // padded queries: meaningless logits
          const at = (b * seq + t) * VOCAB;
          const from = (b * total + total - seq + t) * VOCAB;
          assertClose(actual.subarray(at, at + VOCAB), expected.subarray(from, from + VOCAB), {
            atol: 1e-5,
            rtol: 0,
            label: `${label} step ${step} row ${b} token ${t}`,
          });
        }
        next.push([argmax(actual, (b * seq + seq - 1) * VOCAB, VOCAB)]);
      }
      past = {};
      for (let l = 0; l < layers; l++) {
        const [p, n] = [pastNames(l), presentNames(l)];
        assertEquals(out[n.key].dims, [2, kvHeads, total, headDim]);
        past[p.key] = out[n.key];
        past[p.value] = out[n.value];
      }
      fresh = next;
      ids.forEach((row, b) => row.push(next[b][0]));
      mask.forEach((row) => row.push(1));
    }
    await cached.release();
    await full.release();
  });
}

Deno.test("fp16 export: transformers.js dtype fp16 runs the float16-rounded weights", async () => {
  const label = "qwen3 (q/k norm, head_dim 6 != 12 / 4, GQA 4/1)";
  const raw = { ...CONFIGS[label], ...IDS };
  const cfg = parseHfConfig(raw);
  const params = randomParameters(cfg, 41);
  const rounded = new Map(
    [...params].map(([name, data]) => [name, Float32Array.from(Float16Array.from(data))]),
  );
  const model = await createModel(raw, params, { tokenizer: TOKENIZER });
  const roundedModel = await createModel(raw, rounded, { tokenizer: TOKENIZER });
  const dir = await Deno.makeTempDir();
  try {
    const result = await exportTransformersJs(model, dir, { fp16: true });
    assertEquals(result.onnx.map((r) => r.path), [
      `${dir}/onnx/model.onnx`,
      `${dir}/onnx/model_fp16.onnx`,
    ]);
    const weightBytes = [...params.values()].reduce((n, p) => n + 4 * p.length, 0);
    const saved = result.onnx[0].modelBytes - result.onnx[1].modelBytes;
    // Half of each weight's bytes, less a Cast node (under 48 bytes) per weight.
    const castBytes = 48 * params.size;
    const halved = saved <= weightBytes / 2 && saved > weightBytes / 2 - castBytes;
    assertEquals(halved, true, `${saved} bytes saved of ${weightBytes}`);
    // The fp16 graph computes what the f32 graph of the rounded weights does.
    const half = await ortNode.InferenceSession.create(`${dir}/onnx/model_fp16.onnx`);
    const reference = await ortNode.InferenceSession.create(
      concatBytes(policyOnnx(cfg, rounded, { kvCache: true }).model),
    );
    const ids = TOKENIZER.encode(PROMPTS[0]);
    const feeds: Record<string, ortNode.Tensor> = {
      input_ids: int64NodeTensor(ids, 1),
      attention_mask: int64NodeTensor(ids.map(() => 1), 1),
      position_ids: int64NodeTensor(ids.map((_, t) => t), 1),
    };
    for (const name of Object.values(pastNames(0))) {
      feeds[name] = new ortNode.Tensor("float32", new Float32Array(0), [1, 1, 0, 6]);
    }
    const [a, b] = [await half.run(feeds), await reference.run(feeds)];
    assertClose(a.logits.data as Float32Array, b.logits.data as Float32Array, {
      atol: 1e-5,
      rtol: 0,
      label: "fp16 graph vs f32 graph of rounded weights",
    });
    await half.release();
    await reference.release();

    const greedy = await roundedModel.generate(PROMPTS, { temperature: 0, maxTokens: NEW_TOKENS });
    const pipe = await transformers.pipeline("text-generation", localModelId(dir), {
      dtype: "fp16",
    });
    const texts = await pipe(PROMPTS, { max_new_tokens: NEW_TOKENS, do_sample: false });
    PROMPTS.forEach((prompt, b) => {
      const text = TOKENIZER.decode(greedy[b].tokens, { skipSpecialTokens: true });
      const generated = (texts[b] as { generated_text: string }[])[0].generated_text;
      assertEquals(generated, prompt + text, `fp16 pipeline prompt ${b}`);
    });
    await pipe.dispose();
  } finally {
    await Deno.remove(dir, { recursive: true });
    model.destroy();
    roundedModel.destroy();
  }
});

Deno.test("a copied Hugging Face tokenizer that adds <bos> is exported to encode as rft trained: AutoTokenizer gives rft's ids and greedy tokens", async () => {
  const label = "llama (GQA 4/2, untied)";
  const raw = { ...CONFIGS[label], ...IDS };
  const created = await createModel(raw, randomParameters(parseHfConfig(raw), 29), {
    tokenizer: TOKENIZER,
  });
  const root = await Deno.makeTempDir();
  const [source, out] = [`${root}/hf`, `${root}/tjs`];
  try {
    await created.save(source);
    // The model's tokenizer as a Llama-style tokenizer.json: a post-processor adding <bos>.
    const files = hfCharTokenizerFiles(TOKENIZER);
    const bos = { SpecialToken: { id: "<bos>", type_id: 0 } };
    const withBos = {
      ...files.tokenizer,
      post_processor: {
        type: "TemplateProcessing",
        single: [bos, { Sequence: { id: "A", type_id: 0 } }],
        pair: [bos, { Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }],
        special_tokens: { "<bos>": { id: "<bos>", ids: [1], tokens: ["<bos>"] } },
      },
    };
    await Deno.remove(`${source}/char_tokenizer.json`);
    await Deno.writeTextFile(`${source}/tokenizer.json`, JSON.stringify(withBos));
    await Deno.writeTextFile(
      `${source}/tokenizer_config.json`,
      JSON.stringify({ ...files.config, add_bos_token: true }),
    );
    const model = await loadModel(source);
    try {
      await exportTransformersJs(model, out);
      const config = JSON.parse(await Deno.readTextFile(`${out}/tokenizer_config.json`));
      assertEquals([config.add_bos_token, config.add_eos_token], [false, false]);
      const exported = JSON.parse(await Deno.readTextFile(`${out}/tokenizer.json`));
      assertEquals(JSON.stringify(exported.post_processor).includes("SpecialToken"), false);
      const id = localModelId(out);
      const tokenizer = await transformers.AutoTokenizer.from_pretrained(id);
      const tjsModel = await transformers.AutoModelForCausalLM.from_pretrained(id);
      const greedy = await model.generate(PROMPTS, { temperature: 0, maxTokens: NEW_TOKENS });
      for (const [b, prompt] of PROMPTS.entries()) {
        const inputs = tokenizer(prompt);
        const ids = (inputs.input_ids.tolist() as bigint[][])[0].map(Number);
        assertEquals(ids, model.tokenizer!.encode(prompt), `no <bos> before "${prompt}"`);
        const generated = await tjsModel.generate({
          ...inputs,
          max_new_tokens: NEW_TOKENS,
          do_sample: false,
        }) as transformers.Tensor;
        const row = (generated.tolist() as bigint[][])[0].slice(ids.length).map(Number);
        assertEquals(row.slice(0, greedy[b].tokens.length), greedy[b].tokens, prompt);
      }
      await tjsModel.dispose();
    } finally {
      model.destroy();
    }
  } finally {
    created.destroy();
    await Deno.remove(root, { recursive: true });
  }
});

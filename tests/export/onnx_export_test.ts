import { assertEquals, assertThrows } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import { shapeSize } from "../../src/graph/tensor.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { parameterSpecs } from "../../src/model/parameters.ts";
import { createModel, type PolicyModel } from "../../src/model/policy.ts";
import { buildLogits } from "../../src/model/transformer.ts";
import { exportOnnx, policyOnnx } from "../../src/export/export_onnx.ts";
import { concatBytes } from "../../src/export/onnx_proto.ts";
import { CONFIGS, randomParameters, VOCAB } from "./_configs.ts";
import { int64Tensor, wasmSession } from "./_ort_wasm.ts";

/** Ragged sequences (lengths 9, 3, 6) for padded batches. */
const SEQUENCES = [[3, 16, 0, 7, 7, 12, 1, 9, 4], [5, 2, 11], [8, 13, 6, 0, 15, 10]];

/** rft's logits [T, vocab] of one sequence alone (batch 1, positions 0..T-1). */
async function rftLogits(model: PolicyModel, tokens: readonly number[]): Promise<Float32Array> {
  const T = tokens.length;
  const g = new Graph();
  const input = (name: string) => g.input([1, T], "i32", name);
  const inputs = { ids: input("ids"), positions: input("positions"), segments: input("segments") };
  const logits = buildLogits(model.config, model.weights(g), inputs);
  const exe = await compileGraph(model.gpu, [logits]);
  try {
    await exe.run(
      new Map([
        [inputs.ids, Int32Array.from(tokens)],
        [inputs.positions, Int32Array.from(tokens, (_, t) => t)],
        [inputs.segments, new Int32Array(T)],
      ]),
    );
    return (await exe.read([logits]))[0] as Float32Array;
  } finally {
    exe.destroy();
  }
}

/** Ids and attention mask of `sequences` padded on `side` to the longest (pad id `pad`). */
function paddedBatch(sequences: readonly number[][], side: "left" | "right", pad: number) {
  const T = Math.max(...sequences.map((s) => s.length));
  const ids: number[] = [];
  const mask: number[] = [];
  const starts = sequences.map((s) => (side === "left" ? T - s.length : 0));
  sequences.forEach((s, b) => {
    for (let t = 0; t < T; t++) {
      const i = t - starts[b];
      const real = i >= 0 && i < s.length;
      ids.push(real ? s[i] : pad);
      mask.push(real ? 1 : 0);
    }
  });
  return { T, ids, mask, starts };
}

/** Logits within 1e-4 relative (plus a small floor for logits near 0). */
const TOLERANCE = { atol: 2e-5, rtol: 1e-4 };

for (const [label, raw] of Object.entries(CONFIGS)) {
  Deno.test(`${label}: ORT logits of left- and right-padded batches match rft per sequence`, async () => {
    const cfg = parseHfConfig(raw);
    const params = randomParameters(cfg, 11);
    const model = await createModel(raw, params);
    const expected = await Promise.all(SEQUENCES.map((s) => rftLogits(model, s)));
    const session = await wasmSession(concatBytes(policyOnnx(cfg, params).model));
    for (const side of ["left", "right"] as const) {
      const { T, ids, mask, starts } = paddedBatch(SEQUENCES, side, VOCAB - 1);
      const rows = SEQUENCES.length;
      const out = await session.run({
        input_ids: int64Tensor(ids, rows),
        attention_mask: int64Tensor(mask, rows),
      });
      assertEquals(out.logits.dims, [rows, T, VOCAB]);
      const logits = out.logits.data as Float32Array;
      SEQUENCES.forEach((s, b) => {
        const begin = (b * T + starts[b]) * VOCAB;
        const actual = logits.subarray(begin, begin + s.length * VOCAB);
        assertClose(actual, expected[b], { ...TOLERANCE, label: `${label} ${side} seq ${b}` });
      });
    }
    await session.release();
    model.destroy();
  });
}

Deno.test("an export without attention_mask takes only input_ids and matches rft", async () => {
  const raw = CONFIGS["llama (GQA 4/2, untied)"];
  const cfg = parseHfConfig(raw);
  const params = randomParameters(cfg, 5);
  const model = await createModel(raw, params);
  const sequences = [SEQUENCES[0], SEQUENCES[0].toReversed()];
  const session = await wasmSession(
    concatBytes(policyOnnx(cfg, params, { attentionMask: false }).model),
  );
  assertEquals(session.inputNames, ["input_ids"]);
  const out = await session.run({ input_ids: int64Tensor(sequences.flat(), 2) });
  const logits = out.logits.data as Float32Array;
  const T = sequences[0].length;
  for (const [b, s] of sequences.entries()) {
    const actual = logits.subarray(b * T * VOCAB, (b + 1) * T * VOCAB);
    assertClose(actual, await rftLogits(model, s), { ...TOLERANCE, label: `no mask seq ${b}` });
  }
  await session.release();
  model.destroy();
});

Deno.test("exportOnnx writes the model's GPU weights, inline or as external data", async () => {
  const raw = CONFIGS["qwen2 (q/k/v bias, GQA 6/2, tied)"];
  const cfg = parseHfConfig(raw);
  const model = await createModel(raw, randomParameters(cfg, 3));
  const expected = await rftLogits(model, SEQUENCES[1]);
  const dir = await Deno.makeTempDir();
  try {
    for (const externalData of [false, true]) {
      const path = `${dir}/policy-${externalData}.onnx`;
      const result = await exportOnnx(model, path, { externalData });
      const bytes = await Deno.readFile(path);
      assertEquals(result.modelBytes, bytes.length);
      assertEquals(result.dataPath, externalData ? `${path}.data` : undefined);
      const data = result.dataPath ? await Deno.readFile(result.dataPath) : undefined;
      assertEquals(result.dataBytes, data?.length ?? 0);
      // External: the data file holds every parameter as f32 and nothing else.
      const weightBytes = parameterSpecs(cfg).reduce((n, s) => n + 4 * shapeSize(s.shape), 0);
      assertEquals(result.dataBytes, externalData ? weightBytes : 0);
      const session = await wasmSession(
        bytes,
        data && { path: `policy-${externalData}.onnx.data`, data },
      );
      const tokens = SEQUENCES[1];
      const out = await session.run({
        input_ids: int64Tensor(tokens, 1),
        attention_mask: int64Tensor(tokens.map(() => 1), 1),
      });
      assertClose(out.logits.data as Float32Array, expected, {
        ...TOLERANCE,
        label: `external data ${externalData}`,
      });
      await session.release();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
    model.destroy();
  }
});

Deno.test("policyOnnx names a missing or misshapen parameter", () => {
  const raw = CONFIGS["llama (GQA 4/2, untied)"];
  const cfg = parseHfConfig(raw);
  const params = randomParameters(cfg, 1);
  params.delete("lm_head.weight");
  assertThrows(
    () => policyOnnx(cfg, params),
    Error,
    `Cannot export llama to ONNX: parameter "lm_head.weight" needs ${
      VOCAB * 16
    } values, received none`,
  );
  params.set("lm_head.weight", new Float32Array(3));
  assertThrows(() => policyOnnx(cfg, params), Error, `needs ${VOCAB * 16} values, received 3`);
});

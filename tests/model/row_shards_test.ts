/**
 * Weights in row shards: a model whose vocabulary-sized weights are split (forced here with a
 * small `maxBindingBytes`) computes the same log-probs, greedy tokens and train step as the same
 * model stored whole, reads back and saves its weights under HF names, and reloads either way.
 */

import { assertEquals, assertThrows } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { inTempDir } from "../_temp_dir.ts";
import { tinyLlamaConfig } from "../_tiny_llama.ts";
import { newEid, validateExperience } from "../../src/buffer/experience.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { parameterSpecs } from "../../src/model/parameters.ts";
import { createModel, loadModel, type PolicyModel } from "../../src/model/policy.ts";
import { mergeShards, shardName, shardRows } from "../../src/model/row_shards.ts";
import { TrainStep } from "../../src/trainer/train_step.ts";
import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";
import { configure } from "../../src/util/registry.ts";

const VOCAB = 150;

/** Architectures whose vocabulary weights get sharded: tied and untied llama, tied GPT-2. */
const CONFIGS: Record<string, Record<string, unknown>> = {
  "llama tied": tinyLlamaConfig(VOCAB),
  "llama untied": tinyLlamaConfig(VOCAB, { tie_word_embeddings: false }),
  "gpt2 tied": {
    model_type: "gpt2",
    n_embd: 16,
    n_layer: 1,
    n_head: 2,
    n_positions: 32,
    vocab_size: VOCAB,
    layer_norm_epsilon: 1e-5,
    activation_function: "gelu_new",
  },
};

/**
 * 64 rows of 16 f32 per binding: the 150 x 16 vocabulary weights get 3 shards (64, 64, 22); the
 * other weights fit (GPT-2's largest, c_fc, is 16 x 64).
 */
const SMALL_BINDING = 64 * 16 * 4;

const SEQUENCES = [[1, 149, 7, 33, 104, 18, 130], [9, 9, 140, 2]];

/** Three SFT experiences over the whole vocabulary range. */
function experiences() {
  return [[3, 151 - 2, 20, 97, 128], [17, 0, 66, 145], [5, 5, 99, 12, 130, 44]].map((tokens, i) =>
    validateExperience({
      tokens,
      promptLength: 2,
      actionMask: tokens.map((_, t) => (t >= 2 ? 1 : 0)),
      logprobs: tokens.map(() => 0),
      reward: 0,
      info: { taskId: `t${i}`, runId: 0, policyVersion: 0, eid: newEid(`t${i}`, 0) },
    }, "test")
  );
}

Deno.test("shardRows splits only vocabulary weights over the limit; mergeShards joins them", () => {
  const embedding = parameterSpecs(parseHfConfig(tinyLlamaConfig(150)))[0];
  assertEquals(embedding.name, "model.embed_tokens.weight");
  assertEquals(shardRows(embedding, SMALL_BINDING), [64, 64, 22]);
  assertEquals(shardRows({ ...embedding, shape: [64, 16] }, SMALL_BINDING), undefined);
  assertEquals(shardRows({ shape: [150, 16] }, SMALL_BINDING), undefined, "not shardable");
  const merged = mergeShards(
    new Map([
      [shardName("lm_head.weight", 1), Float32Array.from([3, 4])],
      ["model.norm.weight", Float32Array.from([9])],
      [shardName("lm_head.weight", 0), Float32Array.from([1, 2])],
    ]),
  );
  assertEquals([...merged.keys()].sort(), ["lm_head.weight", "model.norm.weight"]);
  assertEquals(Array.from(merged.get("lm_head.weight")!), [1, 2, 3, 4]);
});

for (const [label, raw] of Object.entries(CONFIGS)) {
  Deno.test(`${label}: a sharded model equals the whole one (log-probs, greedy, train step, save)`, async () => {
    const params = initParameters(parseHfConfig(raw), 21, 0.4);
    const whole = await createModel(raw, params);
    const sharded = await createModel(raw, params, { maxBindingBytes: SMALL_BINDING });
    const shardNames = [...sharded.params.keys()].filter((n) => n.includes("#"));
    const weightsSharded = raw.tie_word_embeddings === false ? 2 : 1;
    assertEquals(shardNames.length, 3 * weightsSharded);
    assertEquals(sharded.variables().length, whole.variables().length + 2 * weightsSharded);

    const [a, b] = [await whole.logprobs(SEQUENCES), await sharded.logprobs(SEQUENCES)];
    for (const i of a.keys()) {
      assertClose(b[i], a[i], { atol: 1e-5, rtol: 1e-5, label: `seq ${i}` });
    }
    const greedy = (m: PolicyModel) =>
      m.generate([[1, 2, 3], [140, 52]], { temperature: 0, maxTokens: 6 });
    assertEquals(
      (await greedy(sharded)).map((s) => s.tokens),
      (await greedy(whole)).map((s) => s.tokens),
    );

    // eps 1e-3: Adam turns a gradient that is rounding noise (GPT-2's key bias, which softmax
    // ignores) into a full step of either sign; a large eps keeps such steps negligible.
    const optimizer = { lr: 0.05, weightDecay: 0.01, eps: 1e-3 };
    const config = { policyLoss: configure(POLICY_LOSS_FN, "sft"), optimizer, gradClip: 1 };
    const steps = [new TrainStep(whole, config), new TrainStep(sharded, config)];
    const [m1, m2] = [
      await steps[0].step(experiences(), { lrStep: 0 }),
      await steps[1].step(experiences(), { lrStep: 0 }),
    ];
    assertClose([m2.loss, m2.grad_norm], [m1.loss, m1.grad_norm], { atol: 1e-6, rtol: 1e-5 });
    const [p1, p2] = [await whole.readParameters(), await sharded.readParameters()];
    assertEquals([...p2.keys()].sort(), [...p1.keys()].sort());
    for (const [name, data] of p1) {
      assertClose(p2.get(name)!, data, { atol: 1e-6, rtol: 1e-5, label: name });
    }
    // The step moved the vocabulary weights (all rows of a used token, in every shard).
    const embed = raw.model_type === "gpt2"
      ? "transformer.wte.weight"
      : "model.embed_tokens.weight";
    assertEquals(p2.get(embed)!.some((x, i) => x !== params.get(embed)![i]), true);

    await inTempDir("rft-row-shards-", async (dir) => {
      await sharded.save(dir);
      const reloaded = await loadModel(dir);
      assertEquals([...reloaded.params.keys()].some((n) => n.includes("#")), false);
      const again = await loadModel(dir, { maxBindingBytes: SMALL_BINDING });
      assertEquals(
        [...again.params.keys()].filter((n) => n.includes("#")).length,
        shardNames.length,
      );
      const [r1, r2] = [await reloaded.readParameters(), await again.readParameters()];
      for (const [name, data] of p2) {
        assertEquals(Array.from(r1.get(name)!), Array.from(data), name);
        assertEquals(Array.from(r2.get(name)!), Array.from(data), name);
      }
      reloaded.destroy();
      again.destroy();
    });
    steps.forEach((s) => s.destroy());
    whole.destroy();
    sharded.destroy();
  });
}

Deno.test("a weight that cannot be sharded and exceeds the binding is refused, naming it", async () => {
  const raw = tinyLlamaConfig(VOCAB);
  const params = initParameters(parseHfConfig(raw), 3);
  const error = await createModel(raw, params, { maxBindingBytes: 16 * 4 }).catch((e) => e);
  assertThrows(
    () => {
      throw error;
    },
    Error,
    'Cannot create model: tensor "model.layers.0.self_attn.q_proj.weight" [16,16] needs 1024 bytes',
  );
});

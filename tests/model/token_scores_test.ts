/**
 * Log-probs and entropies in chunks of tokens over the LM head's pieces of the vocabulary equal
 * the unchunked computation (the whole logits, joined, then the log-softmax) within 1e-5, and so
 * do their gradients with respect to every weight when each chunk is recomputed in the backward
 * pass: a two-layer llama whose tied embedding is stored in three row shards, chunks of 1, 3 and
 * 5 tokens (the last one short), with and without a temperature. Clip_V's `nec` in chunks of 4
 * tokens equals the whole logits' too.
 */

import { assertEquals } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { grad } from "../../src/graph/autodiff.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import type { HostData, Tensor } from "../../src/graph/tensor.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { padBatch } from "../../src/model/padded_batch.ts";
import { createModel, type PolicyModel } from "../../src/model/policy.ts";
import { tokenNec, tokenScores } from "../../src/model/token_scores.ts";
import { buildLogits, scoredHidden, type TokenInputs } from "../../src/model/transformer.ts";
import { add, mul } from "../../src/ops/binary.ts";
import { sumLast } from "../../src/ops/reduce.ts";
import { logSoftmax, softmax } from "../../src/ops/softmax.ts";
import { tokenEntropy, tokenLogprobs } from "../../src/ops/token_logprobs.ts";
import { scale } from "../../src/ops/unary.ts";
import { uniformArray } from "../../src/util/random.ts";
import { GRADCHECK_LLAMA } from "../_model_gradcheck.ts";

const VOCAB = 37;
const RAW = { ...GRADCHECK_LLAMA, vocab_size: VOCAB, tie_word_embeddings: true };
const SEQUENCES = [[1, 5, 2, 9, 12, 3, 7, 30, 36], [4, 4, 0, 11, 20]];
const LEN = 9;

/** The model with its 37 x 8 embedding in shards of 16 rows (16, 16, 5). */
async function shardedModel(): Promise<PolicyModel> {
  const params = initParameters(parseHfConfig(RAW), 5, 0.5);
  const model = await createModel(RAW, params, {
    gpu: await getGpu(),
    maxBindingBytes: 16 * 8 * 4,
  });
  assertEquals(
    [...model.params.keys()].filter((n) => n.startsWith("model.embed_tokens")).length,
    3,
  );
  return model;
}

type ScoredInputs = TokenInputs & { targets: Tensor };

/** The inputs of SEQUENCES padded to LEN, in a new graph. */
function sequenceInputs(): ScoredInputs {
  const g = new Graph();
  const input = (n: string) => g.input([SEQUENCES.length, LEN], "i32", n);
  return {
    ids: input("ids"),
    positions: input("positions"),
    segments: input("segments"),
    targets: input("targets"),
  };
}

/** `outputs` of a graph fed SEQUENCES through `inputs`. */
async function runOnSequences(
  model: PolicyModel,
  inputs: ScoredInputs,
  outputs: Tensor[],
): Promise<HostData[]> {
  const exe = await compileGraph(model.gpu, outputs, "token_scores_test");
  try {
    const feed = padBatch(SEQUENCES, LEN, VOCAB);
    await exe.run(
      new Map([
        [inputs.ids, feed.ids],
        [inputs.positions, feed.positions],
        [inputs.segments, feed.segments],
        [inputs.targets, feed.targets],
      ]),
    );
    return await exe.read(outputs);
  } finally {
    exe.destroy();
  }
}

/** Log-probs, entropies and their projected gradients w.r.t. every weight, by `score`. */
async function scoresAndGradients(
  model: PolicyModel,
  score: (g: Graph, inputs: ScoredInputs) => { logp: Tensor; entropy: Tensor },
): Promise<HostData[]> {
  const inputs = sequenceInputs();
  const g = inputs.ids.graph;
  const { logp, entropy } = score(g, inputs);
  const weights = model.variables().map((v) => g.variable(v));
  const size = SEQUENCES.length * LEN;
  const objective = g.constant(uniformArray(size, 7), [SEQUENCES.length, LEN]);
  const entropyWeight = g.constant(uniformArray(size, 8), [SEQUENCES.length, LEN]);
  const total = add(mul(logp, objective), mul(entropy, entropyWeight));
  return await runOnSequences(model, inputs, [logp, entropy, ...grad(total, weights)]);
}

Deno.test("tokenScores in chunks equals the whole logits' log-softmax, values and gradients", async () => {
  const model = await shardedModel();
  try {
    for (const temperature of [1, 0.7]) {
      const whole = await scoresAndGradients(model, (g, inputs) => {
        let logits = buildLogits(model.config, model.weights(g), inputs);
        if (temperature !== 1) logits = scale(logits, 1 / temperature);
        return { logp: tokenLogprobs(logits, inputs.targets), entropy: tokenEntropy(logits) };
      });
      for (const chunkTokens of temperature === 1 ? [1, 5] : [3]) {
        const chunked = await scoresAndGradients(model, (g, inputs) => {
          const w = model.weights(g);
          const hidden = scoredHidden(model.config, w, inputs);
          return tokenScores(model.config, w, hidden, inputs.targets, {
            temperature,
            recompute: true,
            chunkTokens,
          });
        });
        whole.forEach((expected, i) =>
          assertClose(chunked[i], expected, {
            atol: 1e-5,
            rtol: 1e-5,
            label: `chunks of ${chunkTokens} @${temperature}: output ${i}`,
          })
        );
      }
    }
  } finally {
    model.destroy();
  }
});

Deno.test("tokenNec in chunks equals nec of the whole logits", async () => {
  const model = await shardedModel();
  const inputs = sequenceInputs();
  const w = model.weights(inputs.ids.graph);
  const logits = scale(buildLogits(model.config, w, inputs), 1 / 0.7);
  const p2 = mul(softmax(logits), softmax(logits));
  const sum = (x: Tensor) => sumLast(x, { keepDim: false });
  const whole = add(mul(tokenEntropy(logits), sum(p2)), sum(mul(p2, logSoftmax(logits))));
  const hidden = scoredHidden(model.config, w, inputs);
  const chunked = tokenNec(model.config, w, hidden, { temperature: 0.7, chunkTokens: 4 });
  try {
    const [expected, actual] = await runOnSequences(model, inputs, [whole, chunked]);
    assertEquals(chunked.shape, [SEQUENCES.length, LEN]);
    assertClose(actual, expected, { atol: 1e-6, rtol: 1e-5, label: "nec in chunks of 4" });
  } finally {
    model.destroy();
  }
});

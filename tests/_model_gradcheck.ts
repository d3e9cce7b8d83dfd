/**
 * Gradient checks of the whole model (the transformer's and LoRA's): the two-layer configs of each
 * family they run (tiny enough for f64 finite differences, two layers so that what a layer adds
 * meets the next layer in the residual stream), the GPU gradient of a projected log-prob objective
 * and central finite differences of an f64 one.
 */

import { grad } from "../src/graph/autodiff.ts";
import { compileGraph } from "../src/graph/executable.ts";
import { Graph } from "../src/graph/graph.ts";
import type { HostData, Variable } from "../src/graph/tensor.ts";
import { tokenLogprobs } from "../src/ops/token_logprobs.ts";
import { padBatch } from "../src/model/padded_batch.ts";
import type { PolicyModel } from "../src/model/policy.ts";
import { buildLogits, type BuildOptions } from "../src/model/transformer.ts";

/** Vocabulary of the gradient-check configs. */
export const GRADCHECK_VOCAB = 13;

/** Token sequences of unequal length the gradient checks score. */
export const GRADCHECK_SEQUENCES = [[1, 5, 2, 9, 12, 3, 7], [4, 4, 0, 11]];

/** Llama with grouped-query attention and an untied LM head. */
export const GRADCHECK_LLAMA: Record<string, unknown> = {
  model_type: "llama",
  hidden_size: 8,
  intermediate_size: 12,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  rms_norm_eps: 1e-5,
  rope_theta: 10000,
  vocab_size: GRADCHECK_VOCAB,
  tie_word_embeddings: false,
};

/** GPT-2 with its tied LM head. */
export const GRADCHECK_GPT2: Record<string, unknown> = {
  model_type: "gpt2",
  n_embd: 8,
  n_layer: 2,
  n_head: 2,
  n_positions: 16,
  vocab_size: GRADCHECK_VOCAB,
  layer_norm_epsilon: 1e-5,
  activation_function: "gelu_new",
};

/**
 * The GPU gradients, with respect to `variables`, of sum over rows b and positions t of
 * `projection[b * len + t]` times the log-prob of GRADCHECK_SEQUENCES[b][t + 1], the rows padded
 * to `len`, the graph built with `options`.
 */
export async function logprobGradients(
  model: PolicyModel,
  variables: readonly Variable[],
  projection: Float32Array<ArrayBuffer>,
  len: number,
  options: BuildOptions = {},
): Promise<HostData[]> {
  const g = new Graph();
  const input = (n: string) => g.input([GRADCHECK_SEQUENCES.length, len], "i32", n);
  const inputs = { ids: input("ids"), positions: input("positions"), segments: input("segments") };
  const targets = input("targets");
  const lp = tokenLogprobs(
    buildLogits(model.config, model.weights(g), inputs, 0, options),
    targets,
  );
  const grads = grad(
    lp,
    variables.map((v) => g.variable(v)),
    g.constant(projection, [GRADCHECK_SEQUENCES.length, len]),
  );
  const exe = await compileGraph(model.gpu, grads);
  const feed = padBatch(GRADCHECK_SEQUENCES, len, GRADCHECK_VOCAB);
  await exe.run(
    new Map([
      [inputs.ids, feed.ids],
      [inputs.positions, feed.positions],
      [inputs.segments, feed.segments],
      [targets, feed.targets],
    ]),
  );
  const values = await exe.read(grads);
  exe.destroy();
  return values;
}

/** Central finite differences (step 1e-6) of `objective` in each entry of `w`, changed in place. */
export function finiteDifferences(w: Float64Array, objective: () => number): Float64Array {
  const h = 1e-6;
  const numeric = new Float64Array(w.length);
  for (let j = 0; j < w.length; j++) {
    const keep = w[j];
    w[j] = keep + h;
    const up = objective();
    w[j] = keep - h;
    const down = objective();
    w[j] = keep;
    numeric[j] = (up - down) / (2 * h);
  }
  return numeric;
}

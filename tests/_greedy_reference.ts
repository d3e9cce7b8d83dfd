/** Test helper: greedy samples checked against the f64 reference's logits. */

import type { PolicyModel } from "../src/model/policy.ts";
import { referenceLogits } from "../src/model/transformer_reference.ts";
import { assertEquals } from "./_asserts.ts";

/**
 * Asserts that each greedy sample's tokens (of `prompts`, by `sample.prompt`) are the argmax of
 * the f64 reference's logits over the prompt and the tokens before, wherever the top two logits
 * are more than 1e-4 apart (a near tie may flip in f32); returns how many positions it checked.
 */
export async function checkGreedyTokens(
  model: PolicyModel,
  prompts: readonly number[][],
  samples: readonly { prompt: number; tokens: readonly number[] }[],
): Promise<number> {
  const params = new Map(
    [...await model.readParameters()].map(([k, v]) => [k, Float64Array.from(v)]),
  );
  const V = model.config.vocabSize;
  let checked = 0;
  for (const sample of samples) {
    const prompt = prompts[sample.prompt];
    const logits = referenceLogits(model.config, params, [...prompt, ...sample.tokens]);
    sample.tokens.forEach((token, i) => {
      const row = logits.subarray((prompt.length - 1 + i) * V, (prompt.length + i) * V);
      const sorted = [...row].sort((a, b) => b - a);
      if (sorted[0] - sorted[1] < 1e-4) return;
      assertEquals(token, row.indexOf(sorted[0]), `prompt ${sample.prompt} step ${i}`);
      checked++;
    });
  }
  return checked;
}

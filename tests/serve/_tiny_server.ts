/**
 * Fixtures of the server tests: a tiny random llama with a char tokenizer (its built-in chat
 * template: `<bos>` then each message's content and `<eos>`), served by an `OpenAIServer`, and
 * teacher-forced references computed with `model.logprobs` (an independent path: no KV cache,
 * no sampler).
 */

import { CharTokenizer } from "../../src/model/char_tokenizer.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { createModel, type PolicyModel } from "../../src/model/policy.ts";
import { OpenAIServer, type OpenAIServerOptions } from "../../src/serve/openai_server.ts";
import { ServedModel, type ServedModelOptions } from "../../src/serve/served_model.ts";
import { PolicyRolloutModel } from "../../src/workflow/policy_rollout_model.ts";
import { tinyLlamaConfig } from "../_tiny_llama.ts";

/** The tokenizer of the tiny model. */
export const TOKENIZER: CharTokenizer = CharTokenizer.fromText("abcdefghij 0123456789+=?:");

/** Limits of the served tiny model. */
export const LIMITS = { maxPromptTokens: 24, maxResponseTokens: 8, maxN: 4 };

/** config.json of the tiny model. */
export const TINY_CONFIG: Record<string, unknown> = tinyLlamaConfig(TOKENIZER.vocabSize, {
  bos_token_id: TOKENIZER.bosId,
  eos_token_id: TOKENIZER.eosId,
});

/**
 * A tiny random model (large init, so its distributions are far from uniform) over `tokenizer`
 * with `positions` positions.
 */
export async function tinyModel(
  seed = 3,
  tokenizer: CharTokenizer = TOKENIZER,
  positions = 32,
): Promise<PolicyModel> {
  const config = tokenizer === TOKENIZER && positions === 32 ? TINY_CONFIG : tinyLlamaConfig(
    tokenizer.vocabSize,
    {
      bos_token_id: tokenizer.bosId,
      eos_token_id: tokenizer.eosId,
      max_position_embeddings: positions,
    },
  );
  return await createModel(config, initParameters(parseHfConfig(config), seed, 0.5), {
    tokenizer,
  });
}

/** What a server fixture serves: a tokenizer, limits and the served model's options. */
export interface TinyServerSetup {
  tokenizer?: CharTokenizer;
  limits?: typeof LIMITS;
  served?: ServedModelOptions;
}

/** What a test gets from {@link withServer}. */
export interface TinyServer {
  server: OpenAIServer;
  model: PolicyModel;
  rollout: PolicyRolloutModel;
  /** The model id clients pass. */
  id: string;
}

/**
 * Runs `fn` against a server of a fresh tiny model (over `setup`'s tokenizer and limits); stops
 * and frees everything afterwards.
 */
export async function withServer(
  options: Partial<OpenAIServerOptions> & TinyServerSetup,
  fn: (t: TinyServer) => Promise<void>,
): Promise<void> {
  const { tokenizer = TOKENIZER, limits = LIMITS, served: servedOptions, ...serverOptions } =
    options;
  const positions = limits.maxPromptTokens + limits.maxResponseTokens;
  const model = await tinyModel(3, tokenizer, Math.max(32, positions));
  const rollout = new PolicyRolloutModel(model, {
    maxPromptTokens: limits.maxPromptTokens,
    maxResponseTokens: limits.maxResponseTokens,
    defaults: { temperature: 1, topP: 1, topK: 0 },
    seed: 5,
  });
  const served = new ServedModel("tiny", rollout, {
    maxN: limits.maxN,
    trained: true,
    ...servedOptions,
  });
  const server = await OpenAIServer.start({ models: [served], ...serverOptions });
  try {
    await fn({ server, model, rollout, id: "tiny" });
  } finally {
    await server.close();
    rollout.destroy();
    model.destroy();
  }
}

/** Token ids of char-tokenizer token texts (as the API returns them). */
export function idsOf(tokens: readonly string[]): number[] {
  return tokens.map((t) => {
    const id = TOKENIZER.tokenToId(t);
    if (id === undefined) throw new Error(`Cannot map token ${JSON.stringify(t)} to an id`);
    return id;
  });
}

/** log p of each `response` token after `prompt`, teacher-forced. */
export async function referenceLogprobs(
  model: PolicyModel,
  prompt: readonly number[],
  response: readonly number[],
  temperature = 1,
): Promise<number[]> {
  const [all] = await model.logprobs([[...prompt, ...response]], { temperature });
  return all.slice(prompt.length - 1);
}

/**
 * The full next-token distribution (log-probs by id) at each position of `response` after
 * `prompt`, from teacher-forced log-probs of every candidate token.
 */
export async function referenceDistributions(
  model: PolicyModel,
  prompt: readonly number[],
  response: readonly number[],
): Promise<number[][]> {
  const vocab = model.config.vocabSize;
  const sequences = response.flatMap((_, t) =>
    Array.from({ length: vocab }, (_, id) => [...prompt, ...response.slice(0, t), id])
  );
  const scores = await model.logprobs(sequences);
  return response.map((_, t) =>
    Array.from({ length: vocab }, (_, id) => scores[t * vocab + id].at(-1)!)
  );
}

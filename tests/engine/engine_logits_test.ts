/**
 * The engine's logits processors end to end on a tiny random model: a logit bias forces a token
 * while the reported log-prob stays the model's own (teacher-forced reference), a frequency
 * penalty stops greedy decoding from repeating, a grammar constraint holds token by token (one
 * step per readback), and requests without processors sharing the batch sample what they sample
 * alone.
 */

import { assertEquals } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { GenerationEngine, type GenerationRequest } from "../../src/engine/engine.ts";
import { ByteAutomaton, DEAD } from "../../src/constrained/byte_automaton.ts";
import { byteClass, literal, repeat, seq } from "../../src/constrained/grammar.ts";
import { TokenGrammar, TokenVocabulary } from "../../src/constrained/token_constraint.ts";
import { referenceLogprobs, tinyModel, TOKENIZER } from "../serve/_tiny_server.ts";

const PROMPT = TOKENIZER.encode("<bos>12+30=");

Deno.test("logit bias forces a token, penalties stop repeats; log-probs stay the model's", async () => {
  const model = await tinyModel();
  const engine = new GenerationEngine(model);
  try {
    const forced = TOKENIZER.tokenToId("7")!;
    const requests: GenerationRequest[] = [
      { prompt: PROMPT, temperature: 0, maxTokens: 6, stop: [], logitBias: { [forced]: 100 } },
      { prompt: PROMPT, temperature: 0, maxTokens: 12, stop: [], frequencyPenalty: 50 },
      { prompt: PROMPT, temperature: 0, maxTokens: 12, stop: [] },
    ];
    const [[biased], [penalised], [plain]] = await model.gpuLock.run(() =>
      engine.generateRequests(requests)
    );
    assertEquals(biased.tokens, Array(6).fill(forced));
    assertClose(biased.logprobs, await referenceLogprobs(model, PROMPT, biased.tokens), {
      atol: 2e-4,
      rtol: 1e-4,
    });
    assertEquals(
      new Set(penalised.tokens).size,
      penalised.tokens.length,
      TOKENIZER.decode(penalised.tokens),
    );
    // The plain greedy reply of this model repeats tokens (else the penalty shows nothing).
    assertEquals(
      new Set(plain.tokens).size < plain.tokens.length,
      true,
      TOKENIZER.decode(plain.tokens),
    );
  } finally {
    engine.destroy();
    model.destroy();
  }
});

Deno.test("a grammar constraint holds at every token; unconstrained neighbours sample as alone", async () => {
  const model = await tinyModel();
  const engine = new GenerationEngine(model);
  try {
    const digits = byteClass((b) => b >= 0x30 && b <= 0x39);
    const grammar = seq(literal("a"), repeat(digits, { min: 2, max: 4 }), literal("="));
    const tokens = new TokenGrammar(grammar, TokenVocabulary.of(TOKENIZER), [TOKENIZER.eosId!]);
    const free: GenerationRequest = {
      prompt: PROMPT,
      temperature: 1,
      maxTokens: 8,
      seed: 11,
      n: 2,
    };
    const constrained: GenerationRequest = {
      prompt: PROMPT,
      temperature: 1,
      maxTokens: 8,
      seed: 5,
      n: 3,
      constraint: () => tokens.constraint(),
    };
    const alone = await model.gpuLock.run(() => engine.generateRequests([free]));
    const before = engine.stats.readbacks;
    const [samples, together] = await model.gpuLock.run(() =>
      engine.generateRequests([constrained, free])
    );
    assertEquals(together.map((s) => s.tokens), alone[0].map((s) => s.tokens));
    const automaton = new ByteAutomaton(grammar);
    for (const sample of samples) {
      assertEquals(sample.finishReason, "stop");
      assertEquals(sample.tokens.at(-1), TOKENIZER.eosId);
      const text = TOKENIZER.decode(sample.tokens.slice(0, -1));
      const state = automaton.walk(automaton.start, new TextEncoder().encode(text));
      assertEquals(state !== DEAD && automaton.accepting(state), true, text);
    }
    // One readback per step: the longest sample's tokens (the prefill's included).
    const longest = Math.max(
      ...samples.map((s) => s.tokens.length),
      ...together.map((s) => s.tokens.length),
    );
    assertEquals(engine.stats.readbacks - before, longest);
  } finally {
    engine.destroy();
    model.destroy();
  }
});

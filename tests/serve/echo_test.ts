/**
 * `echo: true` of text completions: each choice's text starts with its prompt, and with
 * `logprobs` the prompt's tokens come first with their teacher-forced log-probs (the first token
 * null, as OpenAI writes it) and alternatives; usage still counts only generated tokens, and a
 * streamed echo adds up to the same text.
 */

import OpenAI from "openai";
import { assertEquals } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { idsOf, referenceDistributions, TOKENIZER, withServer } from "./_tiny_server.ts";

Deno.test("echo: the prompt's text, log-probs and alternatives before each choice's", async () => {
  await withServer({}, async ({ server, model, id }) => {
    const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "none", maxRetries: 0 });
    const prompt = "12+3";
    const request = { model: id, prompt, max_tokens: 3, seed: 5, logprobs: 2 };
    const plain = await openai.completions.create(request);
    const echoed = await openai.completions.create({ ...request, echo: true });
    const [choice] = echoed.choices;
    assertEquals(choice.text, prompt + plain.choices[0].text);
    assertEquals(echoed.usage, plain.usage);
    const logprobs = choice.logprobs!;
    const promptIds = TOKENIZER.encode(prompt);
    assertEquals(idsOf(logprobs.tokens!), [
      ...promptIds,
      ...idsOf(plain.choices[0].logprobs!.tokens!),
    ]);
    assertEquals(logprobs.token_logprobs![0], null);
    const distributions = await referenceDistributions(
      model,
      promptIds.slice(0, 1),
      promptIds.slice(1),
    );
    const expected = promptIds.slice(1).map((tokenId, t) => distributions[t][tokenId]);
    assertClose(logprobs.token_logprobs!.slice(1, promptIds.length) as number[], expected, {
      atol: 1e-4,
      rtol: 0,
    });
    assertEquals(
      logprobs.token_logprobs!.slice(promptIds.length),
      plain.choices[0].logprobs!.token_logprobs,
    );
    const top = logprobs.top_logprobs![1]!;
    const best = Math.max(...distributions[0]);
    assertClose([Math.max(...Object.values(top))], [best], { atol: 1e-4, rtol: 0 });
    assertEquals(logprobs.text_offset!.slice(0, 3), [0, 1, 2]);

    const stream = await openai.completions.create({ ...request, echo: true, stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? "";
    assertEquals(text, choice.text);
    const noLogprobs = await openai.completions.create({
      model: id,
      prompt: promptIds,
      max_tokens: 2,
      echo: true,
    });
    assertEquals(noLogprobs.choices[0].text.startsWith(prompt), true);
  });
});

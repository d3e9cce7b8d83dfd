/**
 * The OpenAI-compatible server through the official `openai` client against a tiny model:
 * chat and text completions, n > 1, log-probs (equal to teacher-forced `model.logprobs`), top
 * log-probs (equal to the top of the teacher-forced distribution), stop texts, streaming, and
 * 32 concurrent requests merged into shared batches.
 */

import OpenAI from "openai";
import { assertEquals } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import {
  idsOf,
  LIMITS,
  referenceDistributions,
  referenceLogprobs,
  TOKENIZER,
  withServer,
} from "./_tiny_server.ts";

const client = (url: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: "none", maxRetries: 0 });

/** The chat prompt as the server encodes it: the char template is <bos>, content, <eos>. */
const chatPrompt = (...contents: string[]) =>
  TOKENIZER.encode(`<bos>${contents.map((c) => `${c}<eos>`).join("")}`);

Deno.test("chat: n samples whose log-probs equal teacher-forced ones; top log-probs are the distribution's top", async () => {
  await withServer({}, async ({ server, model, id }) => {
    const reply = await client(server.url).chat.completions.create({
      model: id,
      messages: [{ role: "system", content: "be bad" }, { role: "user", content: "1+2=?" }],
      n: 3,
      max_tokens: 6,
      seed: 7,
      logprobs: true,
      top_logprobs: 3,
    });
    assertEquals(reply.object, "chat.completion");
    assertEquals(reply.model, id);
    assertEquals(reply.choices.map((c) => c.index), [0, 1, 2]);
    const prompt = chatPrompt("be bad", "1+2=?");
    let completionTokens = 0;
    for (const choice of reply.choices) {
      const content = choice.logprobs!.content!;
      const response = idsOf(content.map((t) => t.token));
      completionTokens += response.length;
      const stopped = response.at(-1) === TOKENIZER.eosId;
      assertEquals(choice.finish_reason, stopped ? "stop" : "length");
      if (!stopped) assertEquals(response.length, 6);
      assertEquals(
        choice.message.content,
        TOKENIZER.decode(stopped ? response.slice(0, -1) : response),
      );
      const expected = await referenceLogprobs(model, prompt, response);
      assertClose(content.map((t) => t.logprob), expected, {
        atol: 1e-4,
        rtol: 0,
        label: "logprobs",
      });
      const distributions = await referenceDistributions(model, prompt, response);
      content.forEach((token, t) => {
        const top = distributions[t].map((logprob, id) => ({ id, logprob }))
          .sort((a, b) => b.logprob - a.logprob).slice(0, 3);
        assertEquals(
          idsOf(token.top_logprobs.map((a) => a.token)),
          top.map((a) => a.id),
          `position ${t}`,
        );
        assertClose(token.top_logprobs.map((a) => a.logprob), top.map((a) => a.logprob), {
          atol: 1e-4,
          rtol: 0,
          label: `top at ${t}`,
        });
      });
    }
    assertEquals(reply.usage, {
      prompt_tokens: prompt.length,
      completion_tokens: completionTokens,
      total_tokens: prompt.length + completionTokens,
    });
  });
});

Deno.test("greedy chat and text completions give the engine's greedy continuation; stop texts cut it", async () => {
  await withServer({}, async ({ server, model, id }) => {
    const openai = client(server.url);
    const [greedy] = await model.generate([chatPrompt("ab")], { temperature: 0, maxTokens: 8 });
    const chat = await openai.chat.completions.create({
      model: id,
      messages: [{ role: "user", content: "ab" }],
      temperature: 0,
    });
    assertEquals(chat.choices[0].message.content, greedy.text);
    assertEquals(chat.usage?.completion_tokens, greedy.tokens.length);

    const [textGreedy] = await model.generate([TOKENIZER.encode("12+3")], {
      temperature: 0,
      maxTokens: 5,
    });
    const text = await openai.completions.create({
      model: id,
      prompt: ["12+3", "12+3"],
      temperature: 0,
      max_tokens: 5,
      n: 2,
      logprobs: 0,
    });
    assertEquals(text.object, "text_completion");
    assertEquals(text.choices.map((c) => c.text), new Array(4).fill(textGreedy.text));
    const logprobs = text.choices[0].logprobs!;
    assertEquals(idsOf(logprobs.tokens!), textGreedy.tokens);
    // One row (the engine's call) and four (the server's) run different kernels, e.g. the MLP as
    // one gated gemv at one row, whose f32 sums round differently: equal to a few ulps of the sums.
    assertClose(logprobs.token_logprobs!, textGreedy.logprobs, { atol: 1e-5, rtol: 0 });
    assertEquals(logprobs.text_offset, logprobs.tokens!.map((_, i) => i));
    const fromIds = await openai.completions.create({
      model: id,
      prompt: TOKENIZER.encode("12+3"),
      temperature: 0,
      max_tokens: 5,
    });
    assertEquals(fromIds.choices[0].text, textGreedy.text);

    // A two-character stop text (two tokens): the text ends before it, finish reason "stop".
    const full = greedy.finishReason === "stop" ? greedy.tokens.slice(0, -1) : greedy.tokens;
    assertEquals(full.length >= 3, true, `greedy reply ${JSON.stringify(greedy.text)}`);
    const stop = TOKENIZER.decode(full.slice(1, 3));
    const cut = await openai.chat.completions.create({
      model: id,
      messages: [{ role: "user", content: "ab" }],
      temperature: 0,
      stop: [stop],
    });
    const fullText = TOKENIZER.decode(full);
    assertEquals(cut.choices[0].message.content, fullText.slice(0, fullText.indexOf(stop)));
    assertEquals(cut.choices[0].finish_reason, "stop");
  });
});

Deno.test("streaming: chunks add up to the non-streamed answer, then finish reason and usage", async () => {
  await withServer({}, async ({ server, id }) => {
    const openai = client(server.url);
    const request = {
      model: id,
      messages: [{ role: "user" as const, content: "hi 9" }],
      temperature: 0,
      n: 2,
      logprobs: true,
    };
    const whole = await openai.chat.completions.create(request);
    const stream = await openai.chat.completions.create({
      ...request,
      stream: true,
      stream_options: { include_usage: true },
    });
    const texts = ["", ""];
    const tokens: string[][] = [[], []];
    const finish: (string | null)[] = [null, null];
    let usage;
    for await (const chunk of stream) {
      assertEquals(chunk.object, "chat.completion.chunk");
      if (chunk.usage) usage = chunk.usage;
      for (const c of chunk.choices) {
        texts[c.index] += c.delta.content ?? "";
        tokens[c.index].push(...(c.logprobs?.content ?? []).map((t) => t.token));
        if (c.finish_reason) finish[c.index] = c.finish_reason;
      }
    }
    assertEquals(texts, whole.choices.map((c) => c.message.content));
    assertEquals(tokens, whole.choices.map((c) => c.logprobs!.content!.map((t) => t.token)));
    assertEquals(finish, whole.choices.map((c) => c.finish_reason));
    assertEquals(usage, whole.usage);

    const textStream = await openai.completions.create({
      model: id,
      prompt: "abc",
      temperature: 0,
      max_tokens: LIMITS.maxResponseTokens,
      stream: true,
    });
    let streamed = "";
    for await (const chunk of textStream) streamed += chunk.choices[0]?.text ?? "";
    const plain = await openai.completions.create({ model: id, prompt: "abc", temperature: 0 });
    assertEquals(streamed, plain.choices[0].text);
  });
});

Deno.test("32 concurrent requests are all answered, merged into fewer engine batches", async () => {
  await withServer({}, async ({ server, rollout, id }) => {
    const openai = client(server.url);
    const before = rollout.stats.batches;
    const replies = await Promise.all(
      Array.from({ length: 32 }, (_, i) =>
        openai.chat.completions.create({
          model: id,
          messages: [{ role: "user", content: `${i}+${i}=` }],
          max_tokens: 4,
          seed: i,
        })),
    );
    assertEquals(replies.length, 32);
    assertEquals(
      replies.every((r) => r.choices.length === 1 && r.usage!.completion_tokens >= 1),
      true,
    );
    const batches = rollout.stats.batches - before;
    assertEquals(batches < 32, true, `${batches} batches for 32 requests`);
    assertEquals(server.activeRequests, 0);
  });
});

Deno.test("GET /v1/models lists the served model; GET /health answers without a key", async () => {
  await withServer({ apiKey: "secret" }, async ({ server, id }) => {
    const models = await new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "secret" }).models
      .list();
    assertEquals(models.data.map((m) => m.id), [id]);
    const health = await fetch(`${server.url}/health`);
    assertEquals([health.status, await health.json()], [200, { status: "ok" }]);
  });
});

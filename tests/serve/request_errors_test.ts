/**
 * The server under bad requests, with raw fetch: malformed JSON, unknown fields, values beyond
 * the limits, too-long prompts, wrong paths, methods, models and keys all get a 4xx with an
 * OpenAI error object, and the server keeps serving; a client that disconnects frees its slot.
 */

import { assertEquals } from "../_asserts.ts";
import { LIMITS, withServer } from "./_tiny_server.ts";

/** Status and error object of a raw request. */
async function call(url: string, init: RequestInit & { json?: unknown } = {}) {
  const { json, ...rest } = init;
  const response = await fetch(url, {
    method: json === undefined ? rest.method ?? "GET" : "POST",
    headers: { "content-type": "application/json", ...rest.headers },
    body: json === undefined ? rest.body : JSON.stringify(json),
    ...rest,
  });
  const body = await response.json();
  return { status: response.status, error: body.error, body };
}

const chat = (extra: Record<string, unknown> = {}) => ({
  model: "tiny",
  messages: [{ role: "user", content: "1+1=" }],
  max_tokens: 2,
  ...extra,
});

Deno.test("malformed and out-of-limit requests get 4xx OpenAI errors; the server keeps serving", async () => {
  await withServer({}, async ({ server }) => {
    const url = `${server.url}/v1/chat/completions`;
    const cases: [string, RequestInit & { json?: unknown }, number, string | null, string][] = [
      [
        "bad JSON",
        { method: "POST", body: "{not json" },
        400,
        null,
        "Cannot parse the request body",
      ],
      ["not an object", { json: [1, 2] }, 400, null, "expected a JSON object"],
      [
        "unknown field",
        { json: chat({ best_of: 2 }) },
        400,
        "best_of",
        'unknown field "best_of"; the chat completions API has',
      ],
      ["n too large", { json: chat({ n: LIMITS.maxN + 1 }) }, 400, "n", `[1, ${LIMITS.maxN}]`],
      ["n not an integer", { json: chat({ n: 1.5 }) }, 400, "n", "received 1.5"],
      [
        "max_tokens too large",
        { json: chat({ max_tokens: LIMITS.maxResponseTokens + 1 }) },
        400,
        "max_tokens",
        `[1, ${LIMITS.maxResponseTokens}]`,
      ],
      [
        "temperature out of range",
        { json: chat({ temperature: 3 }) },
        400,
        "temperature",
        "[0, 2]",
      ],
      ["no messages", { json: { model: "tiny", messages: [] } }, 400, "messages", "non-empty list"],
      [
        "bad role",
        { json: chat({ messages: [{ role: "robot", content: "x" }] }) },
        400,
        "messages[0].role",
        "expected one of",
      ],
      [
        "too-long prompt",
        {
          json: chat({ messages: [{ role: "user", content: "1".repeat(LIMITS.maxPromptTokens) }] }),
        },
        400,
        "messages",
        `at most ${LIMITS.maxPromptTokens}`,
      ],
      [
        "character outside the vocabulary",
        { json: chat({ messages: [{ role: "user", content: "xyz" }] }) },
        400,
        "messages",
        "not in its vocabulary",
      ],
      [
        "stream_options without stream",
        { json: chat({ stream_options: { include_usage: true } }) },
        400,
        "stream_options",
        "only allowed",
      ],
      [
        "unknown model",
        { json: chat({ model: "gpt-9" }) },
        404,
        "model",
        'Cannot find model "gpt-9"',
      ],
      ["wrong method", { method: "GET" }, 405, null, "expected POST"],
    ];
    for (const [label, init, status, param, message] of cases) {
      const { status: got, error } = await call(url, init);
      assertEquals(got, status, label);
      assertEquals(error.param, param, label);
      assertEquals(typeof error.type, "string", label);
      assertEquals(error.message.includes(message), true, `${label}: ${error.message}`);
    }
    const tooLong = await call(url, {
      json: chat({ messages: [{ role: "user", content: "1".repeat(LIMITS.maxPromptTokens) }] }),
    });
    assertEquals(tooLong.error.code, "context_length_exceeded");
    const text = await call(`${server.url}/v1/completions`, {
      json: { model: "tiny", prompt: [[]] },
    });
    assertEquals([text.status, text.error.param], [400, "prompt"]);
    const missing = await call(`${server.url}/v2/anything`);
    assertEquals([missing.status, missing.error.type], [404, "not_found_error"]);
    const closed = await call(`${server.url}/conversations/0123-abcd/v1/chat/completions`, {
      json: chat(),
    });
    assertEquals(closed.status, 404);

    const ok = await call(url, { json: chat() });
    assertEquals([ok.status, ok.body.choices.length], [200, 1]);
    assertEquals(server.activeRequests, 0);
  });
});

Deno.test("with an API key, requests without it get 401; a body over the limit gets 413", async () => {
  await withServer({ apiKey: "k3y", maxBodyBytes: 1000 }, async ({ server }) => {
    const url = `${server.url}/v1/chat/completions`;
    const noKey = await call(url, { json: chat() });
    assertEquals([noKey.status, noKey.error.code], [401, "invalid_api_key"]);
    const wrongKey = await call(url, { json: chat(), headers: { authorization: "Bearer nope" } });
    assertEquals(wrongKey.status, 401);
    const auth = { authorization: "Bearer k3y" };
    const big = await call(url, { json: chat({ user: "x".repeat(2000) }), headers: auth });
    assertEquals(big.status, 413);
    const ok = await call(url, { json: chat(), headers: auth });
    assertEquals(ok.status, 200);
  });
});

Deno.test("a client that disconnects while its request waits frees its slot; beyond the cap is 429", async () => {
  await withServer({ maxConcurrentRequests: 1 }, async ({ server, model }) => {
    const url = `${server.url}/v1/chat/completions`;
    // Hold the GPU so the request waits in the batcher.
    const { promise: held, resolve: release } = Promise.withResolvers<void>();
    const blocker = model.gpuLock.run(() => held);
    const abort = new AbortController();
    const waiting = fetch(url, {
      method: "POST",
      body: JSON.stringify(chat({ stream: true })),
      signal: abort.signal,
    }).catch((err) => err.name);
    while (server.activeRequests === 0) await new Promise((r) => setTimeout(r, 5));
    const refused = await call(url, { json: chat() });
    assertEquals([refused.status, refused.error.type], [429, "rate_limit_error"]);
    abort.abort();
    assertEquals(await waiting, "AbortError");
    while (server.activeRequests > 0) await new Promise((r) => setTimeout(r, 5));
    release();
    await blocker;
    const ok = await call(url, { json: chat() });
    assertEquals(ok.status, 200);
  });
});

Deno.test("a client that stops reading a stream midway frees its slot", async () => {
  await withServer({ maxConcurrentRequests: 1 }, async ({ server }) => {
    const url = `${server.url}/v1/chat/completions`;
    const response = await fetch(url, {
      method: "POST",
      body: JSON.stringify(chat({ stream: true, n: 4, max_tokens: LIMITS.maxResponseTokens })),
    });
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assertEquals(first.startsWith("data: {"), true, first);
    await reader.cancel();
    while (server.activeRequests > 0) await new Promise((r) => setTimeout(r, 5));
    const ok = await call(url, { json: chat() });
    assertEquals(ok.status, 200);
  });
});

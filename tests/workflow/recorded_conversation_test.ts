/**
 * Recorded conversations: calls that continue each other become one sequence with mask 1 on
 * model tokens only (unit tests on hand-made calls), and the same through the real server and
 * the official `openai` client, where the recorded tokens are what the chat template renders.
 */

import OpenAI from "openai";
import {
  RecordedConversation,
  type RecordedSample,
} from "../../src/workflow/recorded_conversation.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { TOKENIZER, withServer } from "../serve/_tiny_server.ts";
import { makeTask } from "./_scripted_model.ts";

const sample = (responseTokens: number[]): RecordedSample => ({
  responseTokens,
  logprobs: responseTokens.map((t) => -t / 10),
  text: "",
  finishReason: "stop",
});

Deno.test("calls that continue each other form one sequence; masks and log-probs only on responses", () => {
  const c = new RecordedConversation();
  c.record({ promptTokens: [1, 2], samples: [sample([3, 4])], policyVersion: 5 });
  c.record({ promptTokens: [1, 2, 3, 4, 7, 8], samples: [sample([9])], policyVersion: 4 });
  const [seq, ...rest] = c.sequences();
  assertEquals(rest, []);
  assertEquals(seq.tokens, [1, 2, 3, 4, 7, 8, 9]);
  assertEquals(seq.promptLength, 2);
  assertEquals(seq.actionMask, [0, 0, 1, 1, 0, 0, 1]);
  assertEquals(seq.logprobs, [0, 0, -0.3, -0.4, 0, 0, -0.9]);
  assertEquals(seq.policyVersion, 4);
});

Deno.test("n samples fork a sequence; a call that continues none starts its own", () => {
  const c = new RecordedConversation();
  c.record({ promptTokens: [1], samples: [sample([2]), sample([3])], policyVersion: 0 });
  c.record({ promptTokens: [1, 3, 5], samples: [sample([6]), sample([7])], policyVersion: 0 });
  c.record({ promptTokens: [8], samples: [sample([9])], policyVersion: 0 });
  assertEquals(c.sequences().map((s) => [s.tokens, s.actionMask]), [
    [[1, 2], [0, 1]],
    [[1, 3, 5, 6], [0, 1, 0, 1]],
    [[1, 3, 5, 7], [0, 1, 0, 1]],
    [[8, 9], [0, 1]],
  ]);
  const task = makeTask({});
  const exps = c.toExperiences(task, 2, 0.5, { turns: 2 });
  assertEquals(
    exps.map((e) => [e.info.runId, e.reward, e.metrics]),
    new Array(4).fill([2, 0.5, { turns: 2 }]),
  );
  assertThrows(
    () => new RecordedConversation().toExperiences(task, 0, 1),
    Error,
    'Cannot build experiences of task "0.3" run 0: the workflow made no call',
  );
});

Deno.test("a multi-turn chat through the server is recorded as one sequence of template tokens", async () => {
  await withServer({}, async ({ server, id }) => {
    const conversation = server.openConversation();
    const client = conversation.client();
    assertEquals(conversation.model, id);
    const first = await client.chat.completions.create({
      model: id,
      messages: [{ role: "user", content: "1+2" }],
      max_tokens: 4,
      logprobs: true,
    });
    const reply = first.choices[0].message.content!;
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: "user", content: "1+2" },
      { role: "assistant", content: reply },
      { role: "user", content: "=3" },
    ];
    const second = await client.chat.completions.create({ model: id, messages, max_tokens: 4 });
    // An unrecorded call (the plain /v1 endpoint) leaves the conversation alone.
    await new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "x" }).chat.completions.create({
      model: id,
      messages,
      max_tokens: 2,
    });
    conversation.close();

    const [seq, ...rest] = conversation.recording.sequences();
    assertEquals(rest, []);
    const ids = (text: string) => TOKENIZER.encode(text);
    const firstTokens = first.choices[0].logprobs!.content!.map((t) =>
      TOKENIZER.tokenToId(t.token)!
    );
    const stopped = first.choices[0].finish_reason === "stop";
    const env = ids(`${stopped ? "" : "<eos>"}=3<eos>`);
    const secondText = second.choices[0].message.content!;
    const secondTokens = [
      ...ids(secondText),
      ...(second.choices[0].finish_reason === "stop" ? [TOKENIZER.eosId!] : []),
    ];
    assertEquals(seq.tokens, [...ids("<bos>1+2<eos>"), ...firstTokens, ...env, ...secondTokens]);
    assertEquals(seq.actionMask, [
      ...ids("<bos>1+2<eos>").map(() => 0),
      ...firstTokens.map(() => 1),
      ...env.map(() => 0),
      ...secondTokens.map(() => 1),
    ]);
    assertEquals(
      seq.logprobs.slice(seq.promptLength, seq.promptLength + firstTokens.length),
      first.choices[0].logprobs!.content!.map((t) => t.logprob),
    );
    const afterClose = await fetch(`${conversation.baseUrl}/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: id, messages }),
    });
    assertEquals(afterClose.status, 404);
    await afterClose.body?.cancel();
  });
});

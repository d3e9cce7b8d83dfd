/**
 * The action mask of a recorded multi-turn, multi-tool agent episode, token by token: an agent
 * talks to the real server through the official `openai` client (a question, three model turns,
 * two tool results and a user turn between them), and the recorded experience must hold the
 * model's tokens with mask 1 and their sampled log-probs, and every other token (the question,
 * the tool results, the user turn, an `<eos>` the template adds after a reply cut at max_tokens)
 * with mask 0 and log-prob 0.
 */

import type OpenAI from "openai";
import { assertEquals } from "../_asserts.ts";
import { idsOf, TOKENIZER, withServer } from "../serve/_tiny_server.ts";
import { makeTask } from "./_scripted_model.ts";

/** What the episode expects of one token. */
interface ExpectedToken {
  id: number;
  mask: 0 | 1;
  logprob: number;
}

/** Tokens of `text` that the model did not write. */
const context = (text: string): ExpectedToken[] =>
  TOKENIZER.encode(text).map((id) => ({ id, mask: 0, logprob: 0 }));

Deno.test("a multi-tool episode through the server: mask 1 on exactly the model's tokens", async () => {
  await withServer({}, async ({ server, id }) => {
    const conversation = server.openConversation();
    const client = conversation.client();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "7+5" }];
    const expected: ExpectedToken[] = context("<bos>7+5<eos>");
    // After each model turn: a tool result, another tool result, then a user turn.
    const environment: OpenAI.ChatCompletionMessageParam[][] = [
      [{ role: "tool", tool_call_id: "1", content: "=12" }],
      [{ role: "tool", tool_call_id: "2", content: "=?" }, { role: "user", content: "?" }],
      [],
    ];
    for (const replies of environment) {
      const completion = await client.chat.completions.create({
        model: id,
        messages,
        max_tokens: 3,
        logprobs: true,
      });
      const [choice] = completion.choices;
      const sampled = choice.logprobs!.content!;
      const ids = idsOf(sampled.map((t) => t.token));
      expected.push(...ids.map((tokenId, i) => ({
        id: tokenId,
        mask: 1 as const,
        logprob: sampled[i].logprob,
      })));
      messages.push({ role: "assistant", content: choice.message.content }, ...replies);
      if (replies.length === 0) break;
      // A reply cut at max_tokens has no <eos> of its own: the next prompt's template writes it.
      if (choice.finish_reason !== "stop") expected.push(...context("<eos>"));
      for (const reply of replies) expected.push(...context(`${reply.content}<eos>`));
    }
    conversation.close();

    const [experience, ...rest] = conversation.recording.toExperiences(makeTask({}), 0, 1);
    assertEquals(rest, []);
    assertEquals(experience.promptLength, context("<bos>7+5<eos>").length);
    const actual = experience.tokens.map((tokenId, t) => ({
      id: tokenId,
      mask: experience.actionMask[t],
      logprob: experience.logprobs[t],
    }));
    assertEquals(
      actual.map((a) => `${TOKENIZER.decode([a.id])}:${a.mask}`),
      expected.map((e) => `${TOKENIZER.decode([e.id])}:${e.mask}`),
    );
    assertEquals(actual, expected);
    assertEquals(expected.filter((e) => e.mask === 1).length >= 3, true);
  });
});

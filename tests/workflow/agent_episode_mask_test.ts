/**
 * The action mask of a recorded multi-turn, multi-tool agent episode, token by token: an agent
 * talks to the real server through the official `openai` client with `tools` (a question, a
 * required call, its result, a named call, its result and a user turn, then a free reply), and
 * the recorded experience must hold exactly the token ids the model generated with mask 1 and
 * their sampled log-probs, and every other token (the question, the tool results, the user turn)
 * with mask 0 and log-prob 0. The model writes its calls with spaces the template does not
 * write: the episode keeps the model's tokens, never the template's rendering of its calls.
 */

import type OpenAI from "openai";
import { assertEquals } from "../_asserts.ts";
import { withServer } from "../serve/_tiny_server.ts";
import { STOP_BIAS, TOOL_SETUP, TOOL_TOKENIZER, TOOLS } from "../serve/_tool_server.ts";
import { makeTask } from "./_scripted_model.ts";

/** What the episode expects of one token. */
interface ExpectedToken {
  id: number;
  mask: 0 | 1;
  logprob: number;
}

/** Tokens of `text` that the model did not write. */
const context = (text: string): ExpectedToken[] =>
  TOOL_TOKENIZER.encode(text).map((id) => ({ id, mask: 0, logprob: 0 }));

/** vLLM's `return_token_ids` field of a choice. */
const tokenIds = (choice: OpenAI.ChatCompletion.Choice) =>
  (choice as unknown as { token_ids: number[] }).token_ids;

Deno.test("a multi-tool episode through the server: mask 1 on exactly the model's tokens", async () => {
  await withServer(TOOL_SETUP, async ({ server, id }) => {
    const conversation = server.openConversation();
    const client = conversation.client();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "weather" }];
    const expected: ExpectedToken[] = context(
      "<bos><tools>get_weather,get_time</tools>weather<eos>",
    );
    const space = String(TOOL_TOKENIZER.tokenToId(" "));
    const turns: [OpenAI.ChatCompletionToolChoiceOption, string[]][] = [
      ["required", ["sunny"]],
      [{ type: "function", function: { name: "get_time" } }, ["noon", "thanks"]],
      ["none", []],
    ];
    const written: string[] = [];
    for (const [choice, replies] of turns) {
      const completion = await client.chat.completions.create({
        model: id,
        messages,
        tools: TOOLS,
        tool_choice: choice,
        parallel_tool_calls: false,
        max_tokens: choice === "none" ? 4 : 80,
        logprobs: true,
        logit_bias: { ...STOP_BIAS, [space]: 3 },
        // @ts-expect-error: vLLM's extension, not in the client's types
        return_token_ids: true,
      });
      const [first] = completion.choices;
      const ids = tokenIds(first);
      const sampled = first.logprobs!.content!;
      expected.push(
        ...ids.map((tokenId, i) => ({
          id: tokenId,
          mask: 1 as const,
          logprob: sampled[i].logprob,
        })),
      );
      written.push(TOOL_TOKENIZER.decode(ids));
      if (replies.length === 0) break;
      assertEquals(first.finish_reason, "tool_calls");
      const call = first.message.tool_calls![0];
      messages.push(first.message, { role: "tool", tool_call_id: call.id, content: replies[0] });
      expected.push(...context(`<tool_response>${replies[0]}</tool_response><eos>`));
      if (replies[1]) {
        messages.push({ role: "user", content: replies[1] });
        expected.push(...context(`${replies[1]}<eos>`));
      }
    }
    conversation.close();
    // The model wrote `{"name": ...` with spaces; the template writes calls compactly.
    assertEquals(
      written[0].includes('{"name": "get_weather"') || written[0].includes(", "),
      true,
      written[0],
    );

    const [experience, ...rest] = conversation.recording.toExperiences(makeTask({}), 0, 1);
    assertEquals(rest, []);
    assertEquals(experience.metrics, { tool_calls: 2, malformed_tool_calls: 0 });
    const actual = experience.tokens.map((tokenId, t) => ({
      id: tokenId,
      mask: experience.actionMask[t],
      logprob: experience.logprobs[t],
    }));
    const show = (tokens: { id: number; mask: number }[]) =>
      tokens.map((e) => `${TOOL_TOKENIZER.decode([e.id])}:${e.mask}`).join(" ");
    assertEquals(show(actual), show(expected));
    assertEquals(actual, expected);
    assertEquals(
      experience.promptLength,
      context("<bos><tools>get_weather,get_time</tools>weather<eos>").length,
    );
  });
});

/**
 * The prompt token ids of a chat request: the conversation rendered by the model's chat
 * template with the request's tools and template variables, or, when the request continues a
 * recorded call of the same conversation (an in-run agent episode), that call's exact prompt
 * and reply tokens followed by only the new turns rendered (see `assistantTurnEnd`): what the
 * model wrote is never re-tokenised, so the training sequence is what the model saw.
 */

import { assistantTurnEnd, type ChatMessage, type ChatOptions } from "../model/chat_template.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import type { RecordedChat, RecordedConversation } from "../workflow/recorded_conversation.ts";
import { badRequest } from "./api_error.ts";
import type { CompletionRequest } from "./completion_request.ts";

/** A chat request's prompt and how it is recorded. */
export interface ChatPrompt {
  tokens: number[];
  chat: RecordedChat;
}

/** The prompt of chat `request`, continuing a call of `recording` when it can. */
export function chatPrompt(
  tokenizer: Tokenizer,
  request: CompletionRequest,
  recording?: RecordedConversation,
): ChatPrompt {
  const options: ChatOptions = { tools: request.tools, variables: request.templateVariables };
  const chat = {
    messages: request.messages,
    context: JSON.stringify([request.tools, request.templateVariables]),
  };
  const render = (messages: readonly ChatMessage[], o: ChatOptions) =>
    tokenizer.applyChatTemplate(messages, o);
  try {
    const continued = recording?.continued(request.messages, chat.context);
    if (continued) {
      const newTurns = request.messages.slice(continued.history.length);
      let after = assistantTurnEnd(render, continued.history, newTurns, options);
      // The model's stop token may be the turn's end the template writes: keep the model's.
      const last = continued.sample.responseTokens.at(-1);
      const stopText = last === undefined || continued.sample.finishReason === "length"
        ? ""
        : tokenizer.decode([last]);
      if (stopText !== "" && after.startsWith(stopText)) after = after.slice(stopText.length);
      return { tokens: [...continued.tokens, ...encode(tokenizer, after)], chat };
    }
    const text = render(request.messages, { ...options, addGenerationPrompt: true });
    return { tokens: encode(tokenizer, text), chat };
  } catch (err) {
    if ((err as { status?: number }).status !== undefined) throw err;
    throw badRequest("messages", (err as Error).message);
  }
}

/** `text` as token ids; text the tokenizer cannot encode is the client's error. */
function encode(tokenizer: Tokenizer, text: string): number[] {
  try {
    return tokenizer.encode(text);
  } catch (err) {
    throw badRequest("messages", (err as Error).message);
  }
}

/**
 * Demonstrations as training experiences, for SFT stages and modes (`algorithm_type: sft`).
 * The dataset is a taskset (`buffer.trainer_input.sft_warmup_dataset`: JSONL, parquet or a HF
 * dataset directory) whose rows hold a prompt and a response (`prompt_key`, `response_key`),
 * or a chat (`messages_key`) whose last turn is the assistant's. Like TRL's SFT trainer, a
 * prompt/response row is trained as plain text (prompt + response + EOS, loss on the response
 * and EOS), a chat through the tokenizer's chat template. Rows that cannot be tokenized or are
 * too long are skipped and counted; the run goes on.
 */

import { newEid } from "../buffer/experience.ts";
import type { Experience } from "../buffer/experience.ts";
import { type Task, taskAnswer, taskMessages, taskPrompt } from "../buffer/task.ts";
import type { Tokenizer } from "../model/tokenizer.ts";

/** The experience of one demonstration, or why there is none. */
export function sftExperience(
  task: Task,
  tokenizer: Tokenizer,
  maxTokens: number,
): Experience | { skipped: string } {
  let prompt: string;
  let response: string;
  try {
    if (task.formatArgs.messagesKey !== undefined) {
      const chat = taskMessages(task);
      const last = chat.at(-1)!;
      if (last.role !== "assistant" || chat.length < 2) {
        return { skipped: `its chat does not end with an assistant turn after a prompt` };
      }
      prompt = tokenizer.applyChatTemplate(chat.slice(0, -1), { addGenerationPrompt: true });
      response = last.content;
    } else {
      prompt = taskPrompt(task);
      response = taskAnswer(task);
    }
    const eos = tokenizer.eosId;
    const promptIds = tokenizer.encode(prompt);
    const responseIds = [...tokenizer.encode(response), ...(eos === undefined ? [] : [eos])];
    const tokens = [...promptIds, ...responseIds];
    if (tokens.length > maxTokens || promptIds.length === 0) {
      return {
        skipped: promptIds.length === 0
          ? "its prompt is empty"
          : `it has ${tokens.length} tokens; at most ${maxTokens} fit`,
      };
    }
    const actionMask = tokens.map((_, t) => (t >= promptIds.length ? 1 : 0));
    return {
      tokens,
      promptLength: promptIds.length,
      actionMask,
      logprobs: tokens.map(() => 0),
      reward: null,
      info: { taskId: task.taskId, runId: 0, policyVersion: 0, eid: newEid(task.taskId, 0) },
      promptText: prompt,
      responseText: response,
    };
  } catch (err) {
    return { skipped: (err as Error).message };
  }
}

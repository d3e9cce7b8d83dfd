/**
 * Demonstrations and preference pairs as training experiences, for SFT (`algorithm_type: sft`)
 * and DPO (`dpo`) stages. The dataset is a taskset (`buffer.trainer_input.sft_warmup_dataset`:
 * JSONL, parquet or a HF dataset directory). SFT rows hold a prompt and a response
 * (`prompt_key`, `response_key`), or a chat (`messages_key`) whose last turn is the
 * assistant's; DPO rows hold a prompt (or a chat of the prompt turns) and two responses
 * (`chosen_key`, `rejected_key`), each a string or a chat whose last turn is the assistant's.
 * Like TRL's trainers, a plain prompt is trained as plain text (prompt + response + EOS, loss on
 * the response and EOS), a chat through the tokenizer's chat template. Rows that cannot be
 * tokenized or are too long are skipped and counted; the run goes on.
 */

import { type Experience, newEid } from "./experience.ts";
import { type Task, taskAnswer, taskMessages, taskPrompt } from "./task.ts";
import type { ChatMessage } from "../model/chat_template.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import { InputError } from "../util/input_error.ts";

/** Why a row gives no experience. */
export interface Skipped {
  skipped: string;
}

/** The experience of one demonstration, or why there is none. */
export function sftExperience(
  task: Task,
  tokenizer: Tokenizer,
  maxTokens: number,
): Experience | Skipped {
  try {
    if (task.formatArgs.messagesKey !== undefined) {
      const chat = taskMessages(task);
      const last = chat.at(-1)!;
      if (last.role !== "assistant" || chat.length < 2) {
        return { skipped: `its chat does not end with an assistant turn after a prompt` };
      }
      const prompt = tokenizer.applyChatTemplate(chat.slice(0, -1), { addGenerationPrompt: true });
      return responseExperience(task, 0, prompt, last.content, tokenizer, maxTokens);
    }
    return responseExperience(task, 0, taskPrompt(task), taskAnswer(task), tokenizer, maxTokens);
  } catch (err) {
    return { skipped: (err as Error).message };
  }
}

/** Row keys of a preference pair's two responses. */
export interface PreferenceKeys {
  chosenKey: string;
  rejectedKey: string;
}

/**
 * The (chosen, rejected) experiences of one preference row, in that order (DPO reads chosen at
 * even rows, rejected at odd), or why there are none.
 */
export function dpoExperiences(
  task: Task,
  tokenizer: Tokenizer,
  maxTokens: number,
  { chosenKey, rejectedKey }: PreferenceKeys,
): Experience[] | Skipped {
  try {
    const prompt = task.formatArgs.messagesKey !== undefined
      ? tokenizer.applyChatTemplate(taskMessages(task), { addGenerationPrompt: true })
      : taskPrompt(task);
    const pair: Experience[] = [];
    for (const [runId, key] of [chosenKey, rejectedKey].entries()) {
      const response = responseText(task.rawTask[key], key);
      const exp = responseExperience(task, runId, prompt, response, tokenizer, maxTokens);
      if ("skipped" in exp) return { skipped: `${key}: ${exp.skipped}` };
      pair.push(exp);
    }
    return pair;
  } catch (err) {
    return { skipped: (err as Error).message };
  }
}

/** A response field: a string, or a chat whose last turn is the assistant's. */
function responseText(value: unknown, key: string): string {
  if (typeof value === "string") return value;
  const last = Array.isArray(value) ? value.at(-1) as ChatMessage | undefined : undefined;
  if (last?.role === "assistant" && typeof last.content === "string") return last.content;
  throw new InputError(
    `"${key}" is ${
      JSON.stringify(value)?.slice(0, 80)
    }; expected a string or a chat ending with an assistant turn`,
  );
}

/** `prompt` + `response` + EOS as an experience trained on the response and EOS. */
function responseExperience(
  task: Task,
  runId: number,
  prompt: string,
  response: string,
  tokenizer: Tokenizer,
  maxTokens: number,
): Experience | Skipped {
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
  return {
    tokens,
    promptLength: promptIds.length,
    actionMask: tokens.map((_, t) => (t >= promptIds.length ? 1 : 0)),
    logprobs: tokens.map(() => 0),
    reward: null,
    info: {
      taskId: task.taskId,
      runId,
      policyVersion: 0,
      eid: newEid(task.taskId, runId),
    },
    promptText: prompt,
    responseText: response,
  };
}

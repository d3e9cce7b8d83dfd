/**
 * Demonstrations and preference pairs as training experiences, for SFT (`algorithm_type: sft`)
 * and DPO (`dpo`) stages. The dataset is a taskset (`buffer.trainer_input.sft_warmup_dataset`:
 * JSONL, parquet or a HF dataset directory). SFT rows hold a prompt and a response
 * (`prompt_key`, `response_key`), or a chat (`messages_key`) whose last turn is the
 * assistant's; DPO rows hold a prompt (or a chat of the prompt turns) and two responses
 * (`chosen_key`, `rejected_key`), each a string or a chat whose last turn is the assistant's.
 * Like TRL's trainers, a plain prompt is trained as plain text (prompt + response + EOS, loss on
 * the response and EOS), a chat through the tokenizer's chat template: the last assistant turn
 * as the template writes it (its content, its tool calls) up to its end token, with the row's
 * tools (Trinity's `tools_key`: a list or its JSON text) passed to the template, so a chat with
 * tool calls and tool results is trained as the model will be prompted. Rows that cannot be
 * tokenized or are too long are skipped and counted; the run goes on.
 */

import { type Experience, newEid } from "./experience.ts";
import { type Task, taskAnswer, taskMessages, taskPrompt } from "./task.ts";
import type { ChatMessage, ToolDefinition } from "../model/chat_template.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import { InputError } from "../util/input_error.ts";

/** Why a row gives no experience. */
export interface Skipped {
  skipped: string;
}

/**
 * The experience of one demonstration, or why there is none; a chat row's tools are
 * `task.rawTask[toolsKey]` (absent: none).
 */
export function sftExperience(
  task: Task,
  tokenizer: Tokenizer,
  maxTokens: number,
  toolsKey?: string,
): Experience | Skipped {
  try {
    if (task.formatArgs.messagesKey !== undefined) {
      const chat = taskMessages(task);
      const last = chat.at(-1)!;
      if (last.role !== "assistant" || chat.length < 2) {
        return { skipped: `its chat does not end with an assistant turn after a prompt` };
      }
      const tools = toolsKey === undefined ? [] : rowTools(task.rawTask[toolsKey], toolsKey);
      const { prompt, response } = renderedTurn(tokenizer, chat, tools);
      return responseExperience(task, 0, prompt, response, tokenizer, maxTokens, true);
    }
    return responseExperience(task, 0, taskPrompt(task), taskAnswer(task), tokenizer, maxTokens);
  } catch (err) {
    return { skipped: (err as Error).message };
  }
}

/** A row's tools: absent, a list, or the JSON text of one (as Trinity's datasets keep them). */
function rowTools(value: unknown, key: string): ToolDefinition[] {
  if (value === undefined || value === null || value === "") return [];
  let tools = value;
  if (typeof value === "string") {
    try {
      tools = JSON.parse(value);
    } catch {
      throw new InputError(`"${key}" (tools_key) is not JSON: ${value.slice(0, 60)}`);
    }
  }
  if (!Array.isArray(tools) || !tools.every((t) => typeof t === "object" && t !== null)) {
    throw new InputError(
      `"${key}" (tools_key) is ${
        JSON.stringify(value).slice(0, 60)
      }; expected a list of tools or its JSON text`,
    );
  }
  return tools as ToolDefinition[];
}

/**
 * The prompt text (the chat before its last turn, with the generation prompt) and the text the
 * template writes for the last turn after it; throws when the template does not write the chat
 * as a continuation of its prompt.
 */
function renderedTurn(
  tokenizer: Tokenizer,
  chat: readonly ChatMessage[],
  tools: readonly ToolDefinition[],
): { prompt: string; response: string } {
  const prompt = tokenizer.applyChatTemplate(chat.slice(0, -1), {
    tools,
    addGenerationPrompt: true,
  });
  const full = tokenizer.applyChatTemplate(chat, { tools });
  if (!full.startsWith(prompt)) {
    throw new InputError(
      "the chat template does not write the chat as a continuation of its prompt with the generation prompt",
    );
  }
  return { prompt, response: full.slice(prompt.length) };
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

/**
 * `prompt` + `response` + EOS as an experience trained on the response and EOS. With
 * `rendered` (a template's text of the turn), the response is cut after its last EOS token (what
 * a template writes after a turn's end is not the model's), and EOS is added only when missing.
 */
function responseExperience(
  task: Task,
  runId: number,
  prompt: string,
  response: string,
  tokenizer: Tokenizer,
  maxTokens: number,
  rendered = false,
): Experience | Skipped {
  const eos = tokenizer.eosId;
  const promptIds = tokenizer.encode(prompt);
  let responseIds = tokenizer.encode(response);
  const end = rendered && eos !== undefined ? responseIds.lastIndexOf(eos) : -1;
  if (end >= 0) responseIds = responseIds.slice(0, end + 1);
  else if (eos !== undefined) responseIds.push(eos);
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
    responseText: rendered ? tokenizer.decode(responseIds.slice(0, -1)) : response,
  };
}

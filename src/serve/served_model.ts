/**
 * A model as the OpenAI-compatible server serves it: a {@link PolicyRolloutModel} (so requests
 * share its generation batches with everything else that samples from it, and carry its policy
 * version) with the server's limits and its tool-call parser. Turns a checked request into
 * samples: renders the chat (`chat_prompt.ts`), refuses prompts beyond the limit (no silent
 * truncation), decodes under the request's output plan (`output_plan.ts`: tool calls, JSON),
 * applies penalties and logit bias, ends samples at stop texts (one-token texts stop the engine;
 * longer ones cut the sample where they appear), reads tool calls from replies, keeps the best
 * of `best_of`, and adds top log-probs on request. Knows nothing of HTTP or JSON shapes.
 */

import { pythonJson, type ToolCall } from "../model/chat_template.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import { chooseToolCallParser, toolCallId } from "../tool_calls/mod.ts";
import type { PolicyRolloutModel } from "../workflow/policy_rollout_model.ts";
import type {
  RecordedCall,
  RecordedChat,
  RecordedConversation,
} from "../workflow/recorded_conversation.ts";
import type { Rollout, RolloutOptions } from "../workflow/rollout_model.ts";
import { ApiError, badRequest } from "./api_error.ts";
import { chatPrompt } from "./chat_prompt.ts";
import type { CompletionRequest, RequestLimits } from "./completion_request.ts";
import { type OutputPlan, OutputPlanner, readReply } from "./output_plan.ts";
import { type PromptEcho, promptEcho } from "./prompt_echo.ts";
import { type TokenLogprob, TopLogprobs } from "./top_logprobs.ts";

/** Default most samples per prompt a request may ask for. */
export const DEFAULT_MAX_N = 16;

/** One generated sample of a completion. */
export interface CompletionChoice {
  /** Index of the prompt it continues (text completions may have several). */
  promptIndex: number;
  /** Generated ids (a stop token, if one ended the sample, is the last). */
  tokens: number[];
  /** log p of each token under the sampling temperature (1 when greedy). */
  logprobs: number[];
  /** Per token, the most likely alternatives (when the request asked for them). */
  topLogprobs?: TokenLogprob[][];
  /** The text generated (without the stop text). */
  text: string;
  /** Chat: the reply as the client gets it (content and tool calls, arguments as JSON text). */
  reply?: { content: string | null; toolCalls: ToolCall[] };
  /** Chat: call blocks left as text (unreadable, or not a call of an offered tool). */
  malformedToolCalls: number;
  finishReason: "stop" | "length" | "tool_calls";
}

/** The samples of a request. */
export interface Completion {
  /** Prompt token ids, one list per prompt. */
  prompts: number[][];
  /** Samples in OpenAI's order: prompt 0's n samples, then prompt 1's, ... */
  choices: CompletionChoice[];
  policyVersion: number;
  /** Chat: the conversation as it is recorded. */
  chat?: RecordedChat;
  /** Text completions with `echo`: each prompt as its choices start. */
  echoes?: PromptEcho[];
}

/** Options of a {@link ServedModel}. */
export interface ServedModelOptions {
  /** Most samples per prompt a request may ask for. Default {@link DEFAULT_MAX_N}. */
  maxN?: number;
  /** Calls may be recorded as training data (the policy of a run; not auxiliary models). */
  trained?: boolean;
  /** The tool-call parser (absent: the one whose format the chat template writes, if any). */
  toolCallParser?: string;
  /** Read replies as tool calls for `tool_choice: "auto"` (false: a 400). Default true. */
  autoToolChoice?: boolean;
}

/** What a served model has answered since it started. */
export interface ServedStats {
  requests: number;
  /** Tool calls returned to clients. */
  toolCalls: number;
  /** Call blocks of replies left as text (malformed). */
  malformedToolCalls: number;
}

/** A model the server answers requests with. */
export class ServedModel {
  readonly maxN: number;
  readonly trained: boolean;
  readonly stats: ServedStats = { requests: 0, toolCalls: 0, malformedToolCalls: 0 };
  readonly #topLogprobs: TopLogprobs;
  readonly #planner: OutputPlanner;

  /**
   * `id`: the name clients pass as `model`. Throws on an unknown `toolCallParser` name (listing
   * the known ones).
   */
  constructor(
    readonly id: string,
    readonly rollout: PolicyRolloutModel,
    { maxN = DEFAULT_MAX_N, trained = false, toolCallParser, autoToolChoice = true }:
      ServedModelOptions = {},
  ) {
    this.maxN = maxN;
    this.trained = trained;
    this.#topLogprobs = new TopLogprobs(rollout.model);
    const tokenizer = rollout.tokenizer;
    const parser = chooseToolCallParser(toolCallParser, tokenizer.chatTemplateSource);
    this.#planner = new OutputPlanner(
      tokenizer,
      parser,
      rollout.model.config.eosTokenIds,
      autoToolChoice,
    );
  }

  /** The name of the tool-call parser replies are read with, if any. */
  get toolCallParser(): string | undefined {
    return this.#planner.parser?.name;
  }

  /** The request limits of this model. */
  get limits(): RequestLimits {
    return { maxN: this.maxN, maxTokens: this.rollout.options.maxResponseTokens };
  }

  get #tokenizer(): Tokenizer {
    return this.rollout.tokenizer;
  }

  /**
   * Samples `request` (checked against {@link limits} by its parser); a chat request on a
   * recorded conversation continues its earlier calls token for token.
   */
  async complete(
    request: CompletionRequest,
    recording?: RecordedConversation,
  ): Promise<Completion> {
    const chat = request.kind === "chat"
      ? chatPrompt(this.#tokenizer, request, recording)
      : undefined;
    const prompts = chat
      ? [this.#checkLength(chat.tokens, "messages")]
      : request.prompts.map((p, i) =>
        this.#textPrompt(p, request.prompts.length > 1 ? `prompt[${i}]` : "prompt")
      );
    const plan = request.kind === "chat" ? this.#planner.plan(request) : undefined;
    const results = await Promise.all(
      prompts.map((p) => this.rollout.generate(p, this.#rolloutOptions(request, plan))),
    );
    const requested = request.temperature ?? this.rollout.options.defaults.temperature;
    const temperature = requested > 0 ? requested : 1; // log-probs of greedy samples: at 1
    const choices: CompletionChoice[] = [];
    for (const [promptIndex, rollouts] of results.entries()) {
      for (const rollout of bestOf(rollouts, request.n)) {
        const choice = this.#choice(promptIndex, rollout, request, plan);
        if (request.topLogprobs > 0) {
          choice.topLogprobs = await this.#topLogprobs.compute(
            prompts[promptIndex],
            choice.tokens,
            request.topLogprobs,
            temperature,
          );
        }
        choices.push(choice);
      }
    }
    this.stats.requests++;
    return {
      prompts,
      choices,
      ...(request.echo && { echoes: await this.#echoes(request, prompts, temperature) }),
      policyVersion: Math.min(...results.flat().map((r) => r.policyVersion)),
      chat: chat?.chat,
    };
  }

  /** The echo of each prompt of a text request (`prompts`: their ids). */
  #echoes(
    request: CompletionRequest,
    prompts: number[][],
    temperature: number,
  ): Promise<PromptEcho[]> {
    const scorer = {
      model: this.rollout.model,
      topLogprobs: this.#topLogprobs,
      tokenizer: this.#tokenizer,
    };
    const scoring = { logprobs: request.logprobs, k: request.topLogprobs, temperature };
    return Promise.all(
      prompts.map((ids, i) => promptEcho(scorer, request.prompts[i], ids, scoring)),
    );
  }

  /** The call as a workflow's recorded conversation keeps it (chat: one prompt). */
  recordedCall(completion: Completion): RecordedCall {
    return {
      promptTokens: completion.prompts[0],
      samples: completion.choices.map((c) => ({
        responseTokens: c.tokens,
        logprobs: c.logprobs,
        text: c.text,
        finishReason: c.finishReason,
        ...(c.reply && {
          reply: { content: c.reply.content, tool_calls: c.reply.toolCalls },
          toolCalls: c.reply.toolCalls.length,
          malformedToolCalls: c.malformedToolCalls,
        }),
      })),
      policyVersion: completion.policyVersion,
      ...(completion.chat && { chat: completion.chat }),
    };
  }

  /** Frees the graphs this server added (not the rollout model or the weights). */
  destroy(): void {
    this.#topLogprobs.destroy();
  }

  /** The rollout options of `request`: sampling, stops, penalties, bias, the plan's grammar. */
  #rolloutOptions(request: CompletionRequest, plan: OutputPlan | undefined): RolloutOptions {
    const vocab = this.rollout.model.config.vocabSize;
    const outside = Object.keys(request.logitBias).find((id) => Number(id) >= vocab);
    if (outside !== undefined) {
      throw badRequest(
        "logit_bias",
        `Cannot read "logit_bias": token id ${outside} is outside the vocabulary of ${vocab} ids`,
      );
    }
    const grammar = plan?.grammar;
    return {
      n: request.bestOf,
      temperature: request.temperature,
      topP: request.topP,
      topK: request.topK,
      maxTokens: request.maxTokens,
      stop: request.stop.filter((s) => isOneToken(this.#tokenizer, s)),
      seed: request.seed,
      frequencyPenalty: request.frequencyPenalty,
      presencePenalty: request.presencePenalty,
      logitBias: request.logitBias,
      constraint: grammar && (() => grammar.constraint()),
    };
  }

  /** A sample as a choice: cut at stop texts, its reply read under `plan`. */
  #choice(
    promptIndex: number,
    rollout: Rollout,
    request: CompletionRequest,
    plan: OutputPlan | undefined,
  ): CompletionChoice {
    const textStops = request.stop.filter((s) => !isOneToken(this.#tokenizer, s));
    const cut = cutAtStopText(this.#tokenizer, rollout, textStops);
    const choice: CompletionChoice = { promptIndex, ...cut, malformedToolCalls: 0 };
    if (!plan) return choice;
    const read = readReply(plan, cut.text, cut.finishReason === "length");
    const toolCalls = read.calls.map((call): ToolCall => ({
      id: toolCallId(),
      type: "function",
      function: { name: call.name, arguments: pythonJson(call.arguments) },
    }));
    this.stats.toolCalls += toolCalls.length;
    this.stats.malformedToolCalls += read.malformed;
    choice.reply = { content: read.content, toolCalls };
    choice.malformedToolCalls = read.malformed;
    if (toolCalls.length > 0 && cut.finishReason === "stop") choice.finishReason = "tool_calls";
    return choice;
  }

  #textPrompt(prompt: string | number[], param: string): number[] {
    if (typeof prompt === "string") return this.#checkLength(this.#encode(prompt, param), param);
    const vocab = this.rollout.model.config.vocabSize;
    const bad = prompt.find((id) => id >= vocab);
    if (bad !== undefined) {
      throw badRequest(
        param,
        `Cannot read "${param}": token id ${bad} is outside the vocabulary of ${vocab} ids`,
      );
    }
    return this.#checkLength(prompt, param);
  }

  /** `text` as token ids; text the tokenizer cannot encode is the client's error. */
  #encode(text: string, param: string): number[] {
    try {
      return this.#tokenizer.encode(text);
    } catch (err) {
      throw badRequest(param, (err as Error).message);
    }
  }

  #checkLength(ids: number[], param: string): number[] {
    const limit = this.rollout.options.maxPromptTokens;
    if (ids.length === 0) {
      throw badRequest(param, `Cannot complete "${param}": the prompt is empty`);
    }
    if (ids.length > limit) {
      throw new ApiError(
        400,
        `Cannot complete "${param}": the prompt has ${ids.length} tokens; this server accepts at most ${limit}`,
        "invalid_request_error",
        param,
        "context_length_exceeded",
      );
    }
    return ids;
  }
}

/** Whether `text` is one token of `tokenizer` (such stop texts end samples in the engine). */
function isOneToken(tokenizer: Tokenizer, text: string): boolean {
  return tokenizer.tokenToId(text) !== undefined || tokenizer.encode(text).length === 1;
}

/**
 * The `n` samples of `rollouts` with the highest total log-prob, in their order (`best_of`: all
 * of them when there are `n`).
 */
function bestOf(rollouts: Rollout[], n: number): Rollout[] {
  if (rollouts.length <= n) return rollouts;
  const total = (r: Rollout) => r.logprobs.reduce((a, b) => a + b, 0);
  const kept = new Set([...rollouts].sort((a, b) => total(b) - total(a)).slice(0, n));
  return rollouts.filter((r) => kept.has(r));
}

/**
 * `rollout` as a choice, cut at the first of `stops` its text contains: the tokens up to the
 * one that completes the stop text are kept (as a stop token would be), the text ends before it.
 */
function cutAtStopText(
  tokenizer: Tokenizer,
  rollout: Rollout,
  stops: readonly string[],
): Pick<CompletionChoice, "tokens" | "logprobs" | "text" | "finishReason"> {
  const whole = {
    tokens: rollout.responseTokens,
    logprobs: rollout.logprobs,
    text: rollout.text,
    finishReason: rollout.finishReason,
  };
  const firstStop = (text: string) =>
    Math.min(...stops.map((s) => text.indexOf(s)).filter((i) => i >= 0));
  const at = firstStop(rollout.text);
  if (!Number.isFinite(at)) return whole;
  for (let count = 1; count <= rollout.responseTokens.length; count++) {
    const text = tokenizer.decode(rollout.responseTokens.slice(0, count));
    const end = firstStop(text);
    if (Number.isFinite(end)) {
      return {
        tokens: rollout.responseTokens.slice(0, count),
        logprobs: rollout.logprobs.slice(0, count),
        text: text.slice(0, end),
        finishReason: "stop",
      };
    }
  }
  return whole;
}

/**
 * The OpenAI-compatible HTTP server (Deno.serve, no framework): `POST /v1/chat/completions`,
 * `POST /v1/completions` (both with `stream: true` as server-sent events), `GET /v1/models`
 * and `GET /v1/models/{id}`, `GET /health`, and `GET /metrics` (Prometheus text: requests, tool calls returned, malformed
 * tool calls left as text, per model). Requests of all clients go to the served models' rollout models, whose batcher
 * merges them into shared engine batches. Listens on 127.0.0.1 unless told otherwise, checks an
 * optional API key, caps concurrent requests (429 beyond), and answers every bad request with a
 * 4xx OpenAI error object. Recorded conversations (`/conversations/<id>/v1/...`) keep each call
 * to a trained model for the workflow that opened them. Streaming sends a sample's chunks once
 * it is generated (the engine returns whole samples); a client that goes away frees its
 * request slot at once, and the batch it was part of finishes without it.
 */

import { OpenAIConversation, type OpenAIEndpoint } from "../workflow/openai_client.ts";
import { RecordedConversation } from "../workflow/recorded_conversation.ts";
import { ApiError, badRequest, errorResponse } from "./api_error.ts";
import { parseCompletionRequest } from "./completion_request.ts";
import { completionBody, completionChunks, responseHeader } from "./response_objects.ts";
import type { ServedModel } from "./served_model.ts";

/** Options of {@link OpenAIServer.start}. */
export interface OpenAIServerOptions {
  /** The models served; the first answers requests that name none. */
  models: readonly ServedModel[];
  /** Address to listen on. Default 127.0.0.1 (this machine only). */
  hostname?: string;
  /** Port; 0 (default) picks a free one. */
  port?: number;
  /** When set, every /v1 request must send `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Requests served at once; more get 429. Default 256. */
  maxConcurrentRequests?: number;
  /** Largest request body accepted. Default 4 MiB. */
  maxBodyBytes?: number;
}

const CONVERSATION_PATH = /^\/conversations\/([0-9a-f-]+)(\/.*)$/;

/** A running OpenAI-compatible server. */
export class OpenAIServer implements OpenAIEndpoint {
  readonly #models: ReadonlyMap<string, ServedModel>;
  readonly #default: ServedModel;
  readonly #apiKey?: string;
  readonly #maxConcurrent: number;
  readonly #maxBodyBytes: number;
  readonly #conversations = new Map<string, RecordedConversation>();
  #server?: Deno.HttpServer<Deno.NetAddr>;
  #active = 0;

  private constructor(options: OpenAIServerOptions) {
    const { models, apiKey, maxConcurrentRequests = 256, maxBodyBytes = 4 * 2 ** 20 } = options;
    if (models.length === 0) {
      throw new Error("Cannot start the OpenAI server: expected at least one model, received none");
    }
    this.#models = new Map(models.map((m) => [m.id, m]));
    if (this.#models.size !== models.length) {
      throw new Error(
        `Cannot start the OpenAI server: model ids must be distinct, received ${
          models.map((m) => m.id).join(", ")
        }`,
      );
    }
    this.#default = models[0];
    this.#apiKey = apiKey;
    this.#maxConcurrent = maxConcurrentRequests;
    this.#maxBodyBytes = maxBodyBytes;
  }

  /**
   * Starts listening; resolves once the port is open.
   *
   * @example
   * ```ts
   * import { ServedModel } from "./served_model.ts";
   * import type { PolicyRolloutModel } from "../workflow/policy_rollout_model.ts";
   * declare const rollout: PolicyRolloutModel;
   * const server = await OpenAIServer.start({ models: [new ServedModel("tiny", rollout)] });
   * console.log(`${server.url}/v1`);
   * ```
   */
  static start(options: OpenAIServerOptions): Promise<OpenAIServer> {
    const server = new OpenAIServer(options);
    const { hostname = "127.0.0.1", port = 0 } = options;
    const { promise, resolve } = Promise.withResolvers<OpenAIServer>();
    try {
      server.#server = Deno.serve({
        hostname,
        port,
        onListen: () => resolve(server),
        onError: (err) => errorResponse(err),
      }, (request) => server.#handle(request));
    } catch (err) {
      throw new Error(
        `Cannot start the OpenAI server on ${hostname}:${port}: ${(err as Error).message}`,
      );
    }
    return promise;
  }

  /** `http://host:port` (IPv6 hosts in brackets). */
  get url(): string {
    const { hostname, port } = this.#server!.addr;
    const host = hostname.includes(":") ? `[${hostname}]` : hostname;
    return `http://${host}:${port}`;
  }

  /** Completion requests being served now. */
  get activeRequests(): number {
    return this.#active;
  }

  /**
   * A conversation with the default (trained) model whose calls are recorded, reached under
   * its own base URL; closing it frees the record from the server.
   */
  openConversation(): OpenAIConversation {
    const id = crypto.randomUUID();
    const recording = new RecordedConversation();
    this.#conversations.set(id, recording);
    return new OpenAIConversation({
      baseUrl: `${this.url}/conversations/${id}/v1`,
      apiKey: this.#apiKey ?? "none",
      model: this.#default.id,
      recording,
      close: () => this.#conversations.delete(id),
    });
  }

  /** Stops listening, waits for open responses to end, and frees the served models' graphs. */
  async close(): Promise<void> {
    await this.#server?.shutdown();
    for (const model of this.#models.values()) model.destroy();
  }

  /** {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #handle(request: Request): Promise<Response> {
    try {
      const url = new URL(request.url);
      let path = url.pathname;
      let recording: RecordedConversation | undefined;
      const match = CONVERSATION_PATH.exec(path);
      if (match) {
        recording = this.#conversations.get(match[1]);
        if (!recording) {
          throw new ApiError(
            404,
            `Cannot find conversation "${match[1]}": it was closed or never opened`,
            "not_found_error",
          );
        }
        path = match[2];
      }
      if (path === "/health") {
        return this.#only(request, "GET", () => Response.json({ status: "ok" }));
      }
      if (path === "/metrics") return this.#only(request, "GET", () => this.#metrics());
      this.#authorize(request);
      if (path.startsWith("/v1/models/")) {
        const id = decodeURIComponent(path.slice("/v1/models/".length));
        return this.#only(request, "GET", () => this.#retrieveModel(id));
      }
      switch (path) {
        case "/v1/models":
          return this.#only(request, "GET", () => this.#listModels());
        case "/v1/chat/completions":
          return await this.#only(
            request,
            "POST",
            () => this.#complete(request, "chat", recording),
          );
        case "/v1/completions":
          return await this.#only(
            request,
            "POST",
            () => this.#complete(request, "text", recording),
          );
        default:
          throw new ApiError(
            404,
            `Cannot route ${request.method} ${path}: no such endpoint`,
            "not_found_error",
          );
      }
    } catch (err) {
      return errorResponse(err);
    }
  }

  #only<T>(request: Request, method: string, handle: () => T): T {
    if (request.method !== method) {
      throw new ApiError(
        405,
        `Cannot ${request.method} ${new URL(request.url).pathname}: expected ${method}`,
      );
    }
    return handle();
  }

  #authorize(request: Request): void {
    if (this.#apiKey === undefined) return;
    if (request.headers.get("authorization") !== `Bearer ${this.#apiKey}`) {
      throw new ApiError(
        401,
        "Cannot authorize the request: expected header Authorization: Bearer <API key>",
        "authentication_error",
        null,
        "invalid_api_key",
      );
    }
  }

  #listModels(): Response {
    return Response.json({ object: "list", data: [...this.#models.keys()].map(modelObject) });
  }

  /** `GET /v1/models/{id}` (the `openai` clients' `models.retrieve`). */
  #retrieveModel(id: string): Response {
    return Response.json(modelObject(this.#served(id).id));
  }

  /** The served model `id`; a 404 naming the served ones otherwise. */
  #served(id: string): ServedModel {
    const model = this.#models.get(id);
    if (!model) {
      throw new ApiError(
        404,
        `Cannot find model ${JSON.stringify(id)}; served: ${[...this.#models.keys()].join(", ")}`,
        "not_found_error",
        "model",
        "model_not_found",
      );
    }
    return model;
  }

  async #complete(
    request: Request,
    kind: "chat" | "text",
    recording: RecordedConversation | undefined,
  ): Promise<Response> {
    if (this.#active >= this.#maxConcurrent) {
      throw new ApiError(
        429,
        `Cannot serve the request: ${this.#maxConcurrent} requests are being served; retry later`,
        "rate_limit_error",
      );
    }
    this.#active++;
    let held = true;
    const release = () => {
      if (held) this.#active--;
      held = false;
    };
    try {
      const body = await this.#readJson(request);
      const named = (body as { model?: unknown })?.model;
      const model = typeof named === "string" ? this.#served(named) : this.#default;
      const parsed = parseCompletionRequest(kind, body, model.limits);
      const recorded = model.trained ? recording : undefined;
      const generating = model.complete(parsed, recorded);
      const completion = await untilAborted(generating, request.signal);
      if (completion === undefined) {
        generating.catch(() => {}); // the client is gone; nobody reads the outcome
        return new Response(null, { status: 499 });
      }
      if (recorded && completion.prompts.length === 1) {
        recorded.record(model.recordedCall(completion));
      }
      const header = responseHeader(kind, model.id);
      const tokenizer = model.rollout.tokenizer;
      if (!parsed.stream) {
        return Response.json(completionBody(parsed, completion, header, tokenizer));
      }
      const chunks = completionChunks(parsed, completion, header, tokenizer);
      held = false; // the stream releases the slot when it ends or the client cancels it
      return new Response(eventStream(chunks, () => this.#active--), {
        headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
      });
    } finally {
      release();
    }
  }

  /** The served models' counters in Prometheus' text format. */
  #metrics(): Response {
    const counters = [
      ["rft_requests_total", "Completion requests served", "requests"],
      ["rft_tool_calls_total", "Tool calls returned to clients", "toolCalls"],
      [
        "rft_malformed_tool_calls_total",
        "Tool-call blocks of replies left as text",
        "malformedToolCalls",
      ],
    ] as const;
    const lines = counters.flatMap(([name, help, key]) => [
      `# HELP ${name} ${help}.`,
      `# TYPE ${name} counter`,
      ...[...this.#models.values()].map((m) => `${name}{model="${m.id}"} ${m.stats[key]}`),
    ]);
    return new Response(lines.join("\n") + "\n", {
      headers: { "content-type": "text/plain; version=0.0.4" },
    });
  }

  async #readJson(request: Request): Promise<unknown> {
    const limit = this.#maxBodyBytes;
    const parts: Uint8Array[] = [];
    let size = 0;
    for await (const part of request.body ?? new ReadableStream<Uint8Array>()) {
      size += part.length;
      if (size > limit) {
        throw new ApiError(413, `Cannot read the request: the body exceeds ${limit} bytes`);
      }
      parts.push(part);
    }
    const bytes = new Uint8Array(size);
    parts.reduce((at, part) => (bytes.set(part, at), at + part.length), 0);
    try {
      return JSON.parse(new TextDecoder().decode(bytes));
    } catch (err) {
      throw badRequest(
        null,
        `Cannot parse the request body: expected JSON, ${(err as Error).message}`,
        "invalid_json",
      );
    }
  }
}

/** `promise`'s value, or undefined as soon as `signal` aborts (the client disconnected). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** A server-sent event stream of `chunks` then `[DONE]`; `end` runs once when it ends or is cancelled. */
function eventStream(chunks: readonly unknown[], end: () => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let next = 0;
  let ended = false;
  const finish = () => {
    if (!ended) end();
    ended = true;
  };
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (next < chunks.length) {
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(chunks[next++])}\n\n`));
        return;
      }
      controller.enqueue(encoder.encode("data: [DONE]\n\n"));
      controller.close();
      finish();
    },
    cancel: finish,
  });
}

/** OpenAI's model object of served model `id`. */
function modelObject(id: string) {
  return { id, object: "model", created: 0, owned_by: "rft" };
}

/**
 * Chat templates: turn a conversation into prompt text with a Jinja template, as HF models ship
 * them (`chat_template` in tokenizer_config.json), rendered by @huggingface/jinja with the
 * variables transformers passes: messages, tools, add_generation_prompt, bos_token, eos_token,
 * pad_token, and any extra template variables (e.g. Qwen3's `enable_thinking`). Messages are
 * normalised as vLLM does before rendering: `null` content is "", a list of text parts is their
 * text, tool-call arguments given as JSON text are parsed into objects (so every template writes
 * them its own way, e.g. with `tojson`), and a tool result that is not text is written as JSON.
 * Also the built-in template of char-level models, and `assistantTurnEnd`, the text a template
 * writes after an assistant turn. Does not tokenize, and passes no documents.
 */

import { Template } from "@huggingface/jinja";

/** A tool call of an assistant message, as the OpenAI API writes it. */
export interface ToolCall {
  /** `call_...`; absent in some datasets. */
  id?: string;
  type?: "function";
  function: {
    name: string;
    /** The arguments: JSON text (the API's form) or the parsed object (datasets' form). */
    arguments: string | Record<string, unknown>;
  };
}

/** A tool a model may call: an entry of the API's `tools` (a JSON-schema'd function). */
export interface ToolDefinition {
  type: "function";
  function: {
    name: string;
    description?: string;
    /** JSON schema of the arguments object. */
    parameters?: Record<string, unknown>;
    strict?: boolean;
  };
}

/** One turn of a conversation (the fields chat templates read). */
export interface ChatMessage {
  role: string;
  content: string;
  /** The author's name (some templates write it). */
  name?: string;
  /** Assistant turns: the tools it called. */
  tool_calls?: ToolCall[];
  /** Tool turns: the call this result answers. */
  tool_call_id?: string;
  /** Assistant turns: reasoning kept apart from the content (Qwen3's templates write it). */
  reasoning_content?: string;
}

/** Options of {@link ChatTemplate.apply}. */
export interface ChatOptions {
  /** Append the opening of an assistant turn, so the model writes the reply. */
  addGenerationPrompt?: boolean;
  /** Tools the model may call, passed to the template as `tools` (absent or empty: none). */
  tools?: readonly ToolDefinition[];
  /** More template variables (transformers' `**kwargs`, vLLM's `chat_template_kwargs`). */
  variables?: Readonly<Record<string, unknown>>;
}

/** Texts of the special tokens a template may use (absent ones render as ""). */
export interface SpecialTokenTexts {
  bos?: string;
  eos?: string;
  pad?: string;
}

/**
 * The built-in template of char-level models: each message's content followed by the eos
 * token, after one bos token; roles are not written, and the generation prompt adds nothing
 * (the reply follows the last eos).
 */
export const CHAR_CHAT_TEMPLATE =
  "{{ bos_token }}{% for message in messages %}{{ message.content }}{{ eos_token }}{% endfor %}";

/**
 * A tool-aware template for char-level models, in the hermes format (so the `hermes` parser
 * reads its calls): after the bos token, the offered tools' names in `<tools>a,b</tools>`; each
 * message's content followed by the eos token, an assistant turn's calls written after its
 * content as `<tool_call>{"name":"f","arguments":{...}}</tool_call>` (compact JSON), a tool
 * result as `<tool_response>...</tool_response>`. The generation prompt adds nothing. Give the
 * tokenizer `<tools>`, `</tools>`, `<tool_call>`, `</tool_call>`, `<tool_response>` and
 * `</tool_response>` as special tokens, and the characters of JSON and of the tool names.
 */
export const CHAR_TOOL_CHAT_TEMPLATE = "{{ bos_token }}" +
  "{% if tools %}<tools>{% for tool in tools %}{% if not loop.first %},{% endif %}" +
  "{{ tool.function.name }}{% endfor %}</tools>{% endif %}" +
  '{% for message in messages %}{% if message.role == "tool" %}' +
  "<tool_response>{{ message.content }}</tool_response>" +
  "{% else %}{{ message.content }}{% if message.tool_calls %}{% for call in message.tool_calls %}" +
  '<tool_call>{"name":"{{ call.function.name }}","arguments":' +
  '{{ call.function.arguments | tojson(separators=(",", ":")) }}}</tool_call>' +
  "{% endfor %}{% endif %}{% endif %}{{ eos_token }}{% endfor %}";

/** The special tokens {@link CHAR_TOOL_CHAT_TEMPLATE} writes, after pad, bos and eos. */
export const CHAR_TOOL_SPECIAL_TOKENS: readonly string[] = [
  "<tools>",
  "</tools>",
  "<tool_call>",
  "</tool_call>",
  "<tool_response>",
  "</tool_response>",
];

/** Variables the renderer sets itself; `ChatOptions.variables` may not override them. */
const RESERVED_VARIABLES = ["messages", "tools", "add_generation_prompt"];

/** A parsed chat template bound to its tokenizer's special tokens. */
export class ChatTemplate {
  readonly #template: Template;

  /** Parses `source`; `origin` (a file) names the template in error messages. */
  constructor(
    readonly source: string,
    readonly origin: string,
    readonly tokens: SpecialTokenTexts = {},
  ) {
    try {
      this.#template = new Template(source);
    } catch (err) {
      throw new Error(`Cannot parse the chat template of ${origin}: ${(err as Error).message}`);
    }
  }

  /** Renders `messages` (normalised, see the file comment) to prompt text. */
  apply(
    messages: readonly ChatMessage[],
    { addGenerationPrompt = false, tools, variables = {} }: ChatOptions = {},
  ): string {
    const reserved = RESERVED_VARIABLES.find((name) => name in variables);
    if (reserved !== undefined) {
      throw new Error(
        `Cannot apply the chat template of ${this.origin}: template variable "${reserved}" is set by the renderer`,
      );
    }
    const { bos, eos, pad } = this.tokens;
    const all: Record<string, unknown> = {
      ...(bos === undefined ? {} : { bos_token: bos }),
      ...(eos === undefined ? {} : { eos_token: eos }),
      ...(pad === undefined ? {} : { pad_token: pad }),
      ...variables,
      messages: normalizeMessages(messages),
      add_generation_prompt: addGenerationPrompt,
      ...(tools && tools.length > 0 ? { tools } : {}),
    };
    try {
      return this.#template.render(all);
    } catch (err) {
      throw new Error(
        `Cannot apply the chat template of ${this.origin}: ${(err as Error).message}`,
      );
    }
  }
}

/**
 * `messages` as templates get them (vLLM's normalisation): content `null` is "", a list of
 * `{type: "text", text}` parts is their text, a tool result that is not text is its JSON
 * ({@link pythonJson}), and tool-call arguments given as JSON text are parsed into objects.
 * Throws naming the message when arguments are not JSON of an object.
 */
export function normalizeMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message, i) => {
    const out: ChatMessage = { ...message, content: contentText(message.content) };
    if (Array.isArray(message.tool_calls)) {
      out.tool_calls = message.tool_calls.map((call, j) => ({
        ...call,
        function: {
          ...call.function,
          arguments: argumentsObject(call.function?.arguments, `messages[${i}].tool_calls[${j}]`),
        },
      }));
    }
    return out;
  });
}

/** A message content as text: strings as they are, text parts joined, other values as JSON. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (content === null || content === undefined) return "";
  const isTextPart = (p: unknown) =>
    typeof (p as { text?: unknown })?.text === "string" &&
    (p as { type?: unknown }).type === "text";
  if (Array.isArray(content) && content.every(isTextPart)) {
    return content.map((p) => (p as { text: string }).text).join("");
  }
  return pythonJson(content);
}

/** Tool-call arguments as an object; `where` names the call in errors. */
export function argumentsObject(value: unknown, where: string): Record<string, unknown> {
  let parsed = value;
  if (typeof value === "string") {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new Error(
        `Cannot read ${where}.function.arguments: expected JSON of an object, received ${
          JSON.stringify(value.slice(0, 60))
        }`,
      );
    }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(
      `Cannot read ${where}.function.arguments: expected an object or JSON of one, received ${
        JSON.stringify(value)?.slice(0, 60)
      }`,
    );
  }
  return parsed as Record<string, unknown>;
}

/**
 * `value` as JSON the way Python's `json.dumps` writes it by default (and so Jinja's `tojson`
 * in transformers, and vLLM's tool-call arguments): `", "` between items, `": "` after keys,
 * non-ASCII characters kept, or written as `\uXXXX` escapes with `ensureAscii` (`json.dumps`'s
 * own default).
 */
export function pythonJson(value: unknown, { ensureAscii = false } = {}): string {
  const text = (v: unknown): string => {
    if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
    if (Array.isArray(v)) return `[${v.map(text).join(", ")}]`;
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .map(([k, item]) => `${JSON.stringify(k)}: ${text(item)}`);
    return `{${entries.join(", ")}}`;
  };
  const json = text(value);
  return ensureAscii
    ? json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
    : json;
}

/** A stand-in assistant content no template writes by itself. */
const TURN_MARK = "\u0001rft-assistant-turn\u0001";

/**
 * The text a chat template writes after the content of the last message of `history` (an
 * assistant turn), when `following` messages come after it, with the generation prompt of the
 * next assistant turn: its end-of-turn marker and the turns in between (e.g. Qwen's
 * `<|im_end|>\n<|im_start|>user\n<tool_response>...`). Found by rendering the conversation with
 * that turn's content (and tool calls) replaced by a mark, so what the model wrote in that turn
 * is never re-rendered: callers append these turns to the model's own tokens. `render` is a
 * tokenizer's `applyChatTemplate`. Throws when the template drops the turn or writes it twice.
 */
export function assistantTurnEnd(
  render: (messages: readonly ChatMessage[], options: ChatOptions) => string,
  history: readonly ChatMessage[],
  following: readonly ChatMessage[],
  options: Omit<ChatOptions, "addGenerationPrompt"> = {},
): string {
  const marked: ChatMessage = { role: "assistant", content: TURN_MARK };
  const text = render([...history.slice(0, -1), marked, ...following], {
    ...options,
    addGenerationPrompt: true,
  });
  const at = text.indexOf(TURN_MARK);
  if (at < 0 || text.indexOf(TURN_MARK, at + 1) >= 0) {
    throw new Error(
      "Cannot continue the conversation after an assistant turn: the chat template does not write that turn's content exactly once",
    );
  }
  return text.slice(at + TURN_MARK.length);
}

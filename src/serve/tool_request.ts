/**
 * Reads what a chat request says about tools and the shape of the reply: `tools` (functions with
 * JSON-schema parameters), `tool_choice` (`none`, `auto`, `required`, a named function, or
 * `allowed_tools`), `parallel_tool_calls`, and `response_format` (`text`, `json_object`,
 * `json_schema`). Checks only the request; what the server does with it is `output_plan.ts`'s.
 */

import type { JsonSchema } from "../constrained/json_schema_grammar.ts";
import type { ToolDefinition } from "../model/chat_template.ts";
import { badRequest } from "./api_error.ts";
import * as field from "./request_fields.ts";

/** How the model may use the request's tools. */
export interface ToolChoice {
  /** `none`: never read calls; `auto`: the model decides; `required`: at least one call. */
  mode: "none" | "auto" | "required";
  /** The tools it may call (all of the request's when absent). */
  allowed?: string[];
  /** Exactly one call (a named function). */
  single: boolean;
}

/** The reply's required shape. */
export type ResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; name: string; schema: JsonSchema; strict: boolean };

/** Function names as OpenAI allows them. */
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** `tools`: a list of functions with distinct valid names (absent: none). */
export function parseTools(value: unknown): ToolDefinition[] {
  return distinctNames(
    listAt(value, "tools").map((tool, i) => parseTool(tool, `tools[${i}]`)),
    "tools",
  );
}

/** `value` as a list (absent: empty); throws naming `param` otherwise. */
export function listAt(value: unknown, param: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    throw badRequest(
      param,
      `Cannot read "${param}": expected a list, received ${field.describe(value)}`,
    );
  }
  return value;
}

/** `tools` after checking that no name is defined twice (`param`: the list's name). */
export function distinctNames(tools: ToolDefinition[], param: string): ToolDefinition[] {
  const names = tools.map((t) => t.function.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) {
    throw badRequest(param, `Cannot read "${param}": function "${twice}" is defined twice`);
  }
  return tools;
}

function parseTool(value: unknown, param: string): ToolDefinition {
  const tool = field.objectAt(value, param);
  if (tool.type !== "function") {
    throw badRequest(
      `${param}.type`,
      `Cannot read "${param}.type": expected "function" (custom tools are not supported), received ${
        field.describe(tool.type)
      }`,
    );
  }
  field.onlyKnown(tool, ["type", "function"], param);
  return parseFunction(tool.function, `${param}.function`);
}

/** A function definition (`name`, `description`, JSON-schema `parameters`, `strict`) at `param`. */
export function parseFunction(value: unknown, param: string): ToolDefinition {
  const fn = field.objectAt(value, param);
  field.onlyKnown(fn, ["name", "description", "parameters", "strict"], param);
  const name = field.stringField(fn, "name", `${param}.name`);
  if (name === undefined || !NAME.test(name)) {
    throw badRequest(
      `${param}.name`,
      `Cannot read "${param}.name": expected 1 to 64 letters, digits, "_" or "-", received ${
        field.describe(fn.name)
      }`,
    );
  }
  const description = field.stringField(fn, "description", `${param}.description`);
  const strict = field.booleanField(fn, "strict", `${param}.strict`);
  const parameters = fn.parameters === undefined || fn.parameters === null
    ? undefined
    : field.objectAt(fn.parameters, `${param}.parameters`);
  return {
    type: "function",
    function: {
      name,
      ...(description === undefined ? {} : { description }),
      ...(parameters === undefined ? {} : { parameters: parameters as Record<string, unknown> }),
      ...(strict === undefined ? {} : { strict }),
    },
  };
}

/**
 * `tool_choice` for `tools` (default: `auto` with tools, `none` without; `auto` without tools,
 * as frameworks send it with an empty tool list, is `none`).
 */
export function parseToolChoice(value: unknown, tools: readonly ToolDefinition[]): ToolChoice {
  if (value === undefined || value === null) {
    return { mode: tools.length > 0 ? "auto" : "none", single: false };
  }
  if (tools.length === 0 && (value === "none" || value === "auto")) {
    return { mode: "none", single: false }; // with no tools offered, "auto" asks for nothing
  }
  if (tools.length === 0) {
    throw badRequest(
      "tool_choice",
      `Cannot read "tool_choice": ${field.describe(value)} needs "tools"`,
    );
  }
  const known = (name: string, param: string) => {
    if (!tools.some((t) => t.function.name === name)) {
      throw badRequest(param, `Cannot read "${param}": no tool is named "${name}"`);
    }
    return name;
  };
  if (value === "none" || value === "auto" || value === "required") {
    return { mode: value, single: false };
  }
  if (field.isObject(value) && value.type === "function") {
    const name = field.stringField(
      field.objectAt(value.function, "tool_choice.function"),
      "name",
      "tool_choice.function.name",
    );
    return {
      mode: "required",
      allowed: [known(name ?? "", "tool_choice.function.name")],
      single: true,
    };
  }
  if (field.isObject(value) && value.type === "allowed_tools") {
    const spec = field.objectAt(value.allowed_tools, "tool_choice.allowed_tools");
    const mode = field.choiceField(
      spec,
      "mode",
      ["auto", "required"],
      "tool_choice.allowed_tools.mode",
    );
    if (!Array.isArray(spec.tools) || spec.tools.length === 0) {
      throw badRequest(
        "tool_choice.allowed_tools.tools",
        'Cannot read "tool_choice.allowed_tools.tools": expected a non-empty list',
      );
    }
    const allowed = spec.tools.map((t, i) => {
      const param = `tool_choice.allowed_tools.tools[${i}]`;
      const fn = field.objectAt(field.objectAt(t, param).function, `${param}.function`);
      return known(
        field.stringField(fn, "name", `${param}.function.name`) ?? "",
        `${param}.function.name`,
      );
    });
    return { mode: mode ?? "auto", allowed, single: false };
  }
  throw badRequest(
    "tool_choice",
    `Cannot read "tool_choice": expected "none", "auto", "required", {"type": "function", "function": {"name": ...}} or {"type": "allowed_tools", ...}, received ${
      field.describe(value)
    }`,
  );
}

/** `response_format` (absent: text). */
export function parseResponseFormat(value: unknown): ResponseFormat {
  if (value === undefined || value === null) return { type: "text" };
  const format = field.objectAt(value, "response_format");
  const type = field.choiceField(
    format,
    "type",
    ["text", "json_object", "json_schema"],
    "response_format.type",
  );
  if (type === undefined) {
    throw badRequest("response_format.type", 'Cannot read "response_format": expected a "type"');
  }
  if (type !== "json_schema") {
    field.onlyKnown(format, ["type"], "response_format");
    return { type };
  }
  field.onlyKnown(format, ["type", "json_schema"], "response_format");
  const spec: field.Fields = field.objectAt(format.json_schema, "response_format.json_schema");
  field.onlyKnown(spec, ["name", "description", "schema", "strict"], "response_format.json_schema");
  const name = field.stringField(spec, "name", "response_format.json_schema.name");
  if (name === undefined || !NAME.test(name)) {
    throw badRequest(
      "response_format.json_schema.name",
      `Cannot read "response_format.json_schema.name": expected 1 to 64 letters, digits, "_" or "-", received ${
        field.describe(spec.name)
      }`,
    );
  }
  const schema = spec.schema === undefined || spec.schema === null
    ? {}
    : field.objectAt(spec.schema, "response_format.json_schema.schema");
  const strict = field.booleanField(spec, "strict", "response_format.json_schema.strict") ?? false;
  return { type, name, schema, strict };
}

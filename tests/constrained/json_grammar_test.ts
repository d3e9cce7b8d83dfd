/**
 * The byte grammars of JSON and JSON schemas, run by the lazily determinized automaton: texts
 * the schema accepts are whole sentences, texts it rejects die or stay incomplete, recursion
 * (any JSON, `$ref`) works, and the checker reports what a grammar cannot say.
 */

import { assertEquals } from "../_asserts.ts";
import { ByteAutomaton, DEAD } from "../../src/constrained/byte_automaton.ts";
import { alt, literal, repeat, seq } from "../../src/constrained/grammar.ts";
import {
  anyJsonObject,
  type JsonSchema,
  jsonSchemaGrammar,
} from "../../src/constrained/json_schema_grammar.ts";
import { jsonSchemaProblems } from "../../src/constrained/json_schema_check.ts";

const utf8 = new TextEncoder();

/** "whole", "prefix" (may continue) or "dead" for `text` under `automaton`. */
function verdict(automaton: ByteAutomaton, text: string): string {
  const state = automaton.walk(automaton.start, utf8.encode(text));
  if (state === DEAD) return "dead";
  return automaton.accepting(state) ? "whole" : "prefix";
}

Deno.test("repeat with a separator and bounds, alternatives sharing prefixes", () => {
  const a = new ByteAutomaton(
    seq(
      literal("["),
      repeat(alt(literal("ab"), literal("ac")), { min: 1, max: 2, separator: literal(",") }),
      literal("]"),
    ),
  );
  assertEquals(
    ["[ab]", "[ab,ac]", "[ab,ac,ab]", "[]", "[a", "[ad", "[ab,"].map((t) => verdict(a, t)),
    ["whole", "whole", "dead", "dead", "prefix", "dead", "prefix"],
  );
});

Deno.test("a schema's grammar: property order, optional and required properties, types", () => {
  const schema: JsonSchema = {
    type: "object",
    properties: {
      city: { type: "string" },
      days: { type: "integer" },
      unit: { enum: ["celsius", "fahrenheit"] },
      tags: { type: "array", items: { type: "boolean" }, maxItems: 2 },
    },
    required: ["city", "unit"],
    additionalProperties: false,
  };
  const a = new ByteAutomaton(jsonSchemaGrammar(schema));
  const cases: [string, string][] = [
    ['{"city": "Paris", "unit": "celsius"}', "whole"],
    ['{"city":"Pa\\"ris\\u00e9","days":-12,"unit":"fahrenheit"}', "whole"],
    ['{"city": "x", "days": 3, "unit": "celsius", "tags": [true, false]}', "whole"],
    ['{"city": "x", "unit": "celsius", "tags": [true, false, true]}', "dead"],
    ['{"unit": "celsius"}', "dead"],
    ['{"city": "x", "days": 3.5', "dead"],
    ['{"city": "x", "days": 012', "dead"],
    ['{"city": "x", "unit": "kelvin"}', "dead"],
    ['{"city": "x"}', "dead"],
    ['{"city": "x", "unit": "celsius"', "prefix"],
    ['{"city": "x\n', "dead"],
    ['{ "city": "x"', "dead"],
  ];
  assertEquals(cases.map(([t]) => verdict(a, t)), cases.map(([, v]) => v));
});

Deno.test("any JSON object, recursive; $ref into $defs, anyOf and nullable", () => {
  const any = new ByteAutomaton(anyJsonObject());
  assertEquals(
    ['{"a": [1, {"b": null}, "c", -2.5e3], "d": {}}', "{}", "[1]", '{"a": tru', '{"a": 1,}'].map((
      t,
    ) => verdict(any, t)),
    ["whole", "whole", "dead", "prefix", "dead"],
  );
  const tree: JsonSchema = {
    $ref: "#/$defs/node",
    $defs: {
      node: {
        type: "object",
        properties: {
          value: { anyOf: [{ type: "number" }, { type: "string", nullable: true }] },
          children: { type: "array", items: { $ref: "#/$defs/node" } },
        },
        required: ["value", "children"],
      },
    },
  };
  const a = new ByteAutomaton(jsonSchemaGrammar(tree));
  assertEquals(
    [
      '{"value": 1, "children": [{"value": null, "children": []}, {"value": "x", "children": []}]}',
      '{"value": true, "children": []}',
    ].map((t) => verdict(a, t)),
    ["whole", "dead"],
  );
  // Every state is built once: walking the same text again adds none.
  const states = a.size;
  verdict(a, '{"value": 1, "children": [{"value": null, "children": []}]}');
  assertEquals(a.size, states);
});

Deno.test("the checker reports what the grammar does not say, by JSON pointer", () => {
  const schema: JsonSchema = {
    type: "object",
    properties: {
      n: { type: "integer", minimum: 1, maximum: 9 },
      s: { type: "string", pattern: "^[a-z]+$", maxLength: 3 },
      items: { type: "array", items: { type: "number" }, uniqueItems: true },
    },
    required: ["n"],
    additionalProperties: false,
  };
  assertEquals(jsonSchemaProblems({ n: 3, s: "abc", items: [1, 2] }, schema), []);
  assertEquals(jsonSchemaProblems({ n: 0, s: "aB", items: [1, 1], x: 1 }, schema), [
    "/n: expected >= 1, found 0",
    "/s: expected to match /^[a-z]+$/",
    "/items: expected unique items",
    '/: unexpected property "x"',
  ]);
  assertEquals(jsonSchemaProblems({ s: 2.5 }, schema), [
    '/: missing required property "n"',
    "/s: expected string, found number",
  ]);
});

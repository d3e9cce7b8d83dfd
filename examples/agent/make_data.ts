/**
 * Data of the agent example: three-digit sums "523+337" with their answer "860", too long for
 * the tiny model to add in its head, and a tool it can call, `add(a, b)`, through OpenAI-style
 * function calling. The warm-up demonstrations are chats with `tools`: the user's sum, the
 * assistant's call of `add` (a `tool_calls` entry), the tool's result and the assistant's
 * answer. They are imperfect in a systematic way: for most sums whose first term is 500 or
 * more, a careless demonstrator types the call with a doubled comma
 * (`{"a":523,,"b":337}`), which is not JSON, so the server leaves it as text (a malformed
 * call) and the agent takes that text for its answer. Greedy decoding after the warm-up
 * follows it (right on about half of the sums); sampling still types the call right now and
 * then, which RL rewards.
 *
 * Deterministic (seeded); eval problems are disjoint from the training and demonstration ones.
 * Run from the repository root:
 *   ./rft deno run -A examples/agent/make_data.ts
 * It writes examples/agent/data/:
 *   train.jsonl / eval.jsonl: {"question": "523+337", "answer": "860"}
 *   sft.jsonl: one row per assistant turn of each demonstration, the chat so far ending with
 *     that turn, and the tools: {"messages": [...], "tools": [ADD]}.
 */

import { mulberry32 } from "../../src/util/random.ts";
import { ADD_TOOL } from "./plugin/calculator_agent.ts";

const SEED = 2024;
const TRAIN = 3000;
const EVAL = 200;
const DEMOS = 3000;
/** Share of demonstrations with a first term of 500 or more whose call is mistyped. */
const SLIP_SHARE = 0.75;

/** A chat turn of a demonstration, as the OpenAI API writes it. */
type Message = Record<string, unknown>;

const random = mulberry32(SEED);
const threeDigits = () => 100 + Math.floor(random() * 900);
const seen = new Set<string>();

/** `count` problems not drawn before: [a, b]. */
function draw(count: number): [number, number][] {
  const problems: [number, number][] = [];
  while (problems.length < count) {
    const [a, b] = [threeDigits(), threeDigits()];
    if (seen.has(`${a}+${b}`)) continue;
    seen.add(`${a}+${b}`);
    problems.push([a, b]);
  }
  return problems;
}

/**
 * The demonstration of `a+b`: a call of `add`, its result and the answer; or, slipping, the
 * mistyped call as text, which ends the episode.
 */
function demonstration(a: number, b: number, index: number): Message[] {
  const question = { role: "user", content: `${a}+${b}` };
  if (a >= 500 && random() < SLIP_SHARE) {
    const slip = `<tool_call>{"name":"add","arguments":{"a":${a},,"b":${b}}}</tool_call>`;
    return [question, { role: "assistant", content: slip }];
  }
  const id = `call_${index}`;
  return [
    question,
    {
      role: "assistant",
      content: "",
      tool_calls: [{ id, type: "function", function: { name: "add", arguments: { a, b } } }],
    },
    { role: "tool", tool_call_id: id, content: String(a + b) },
    { role: "assistant", content: String(a + b) },
  ];
}

const tasks = (problems: [number, number][]) =>
  problems.map(([a, b]) => JSON.stringify({ question: `${a}+${b}`, answer: String(a + b) }));
const demos = draw(DEMOS).flatMap(([a, b], index) => {
  const episode = demonstration(a, b, index);
  return episode.flatMap((m, i) =>
    m.role === "assistant"
      ? [JSON.stringify({ messages: episode.slice(0, i + 1), tools: [ADD_TOOL] })]
      : []
  );
});
const lines = (rows: string[]) => rows.join("\n") + "\n";

const dir = new URL("./data/", import.meta.url);
await Deno.mkdir(dir, { recursive: true });
await Deno.writeTextFile(new URL("eval.jsonl", dir), lines(tasks(draw(EVAL))));
await Deno.writeTextFile(new URL("train.jsonl", dir), lines(tasks(draw(TRAIN))));
await Deno.writeTextFile(new URL("sft.jsonl", dir), lines(demos));

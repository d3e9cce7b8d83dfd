/**
 * The agent example (examples/agent/), shortened with `--set` overrides to two steps per stage
 * and four held-out sums: the SFT warm-up (chats with tools) and the GRPO stage both evaluate the
 * agent through the run's OpenAI API with function calling, every rollout metric of an episode
 * is logged, and every experience is the recorded episode: the question, then model turns
 * (mask 1) each followed, after tool calls, by the tools' results (mask 0), with the metrics
 * counting exactly that.
 */

import { assertEquals } from "../_asserts.ts";
import { readExperienceDir } from "../../src/buffer/experience_io.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { loadCharTokenizer } from "../../src/model/char_tokenizer.ts";
import { CHAR_TOOL_CHAT_TEMPLATE } from "../../src/model/chat_template.ts";
import { loadPlugins } from "../../src/run/run_plugins.ts";
import { runConfig } from "../../src/run/run.ts";
import { TOOL_CALL_PARSERS } from "../../src/tool_calls/mod.ts";
import { metricsRows, quiet } from "./_fixture.ts";

const EXAMPLE = new URL("../../examples/agent/", import.meta.url).pathname;
const hermes = TOOL_CALL_PARSERS.get("hermes");

/** The tool's result for a call of `add`, computed here independently of the plugin. */
function addResult(args: Record<string, unknown>): string {
  const { a, b } = args;
  return Number.isInteger(a) && Number.isInteger(b)
    ? String((a as number) + (b as number))
    : "error";
}

/** Maximal runs of equal mask values: [mask, start, end) triples. */
function spans(mask: readonly number[]): [number, number, number][] {
  const out: [number, number, number][] = [];
  mask.forEach((m, i) => {
    if (i > 0 && out.at(-1)![0] === m) out.at(-1)![2] = i + 1;
    else out.push([m, i, i + 1]);
  });
  return out;
}

Deno.test("the agent example warms up and trains through the OpenAI API; metrics count each episode", async () => {
  const [plugin] = await loadPlugins([{ path: `${EXAMPLE}plugin`, optional: false }]);
  assertEquals(plugin.registered, ['workflow "calculator_agent"']);
  const root = await Deno.makeTempDir();
  const evalLines = (await Deno.readTextFile(`${EXAMPLE}data/eval.jsonl`)).split("\n");
  await Deno.writeTextFile(`${root}/eval.jsonl`, evalLines.slice(0, 4).join("\n") + "\n");
  const config = await loadConfig(`${EXAMPLE}config.yaml`, {
    overrides: [
      `checkpoint_root_dir=${root}`,
      `buffer.explorer_input.eval_tasksets[0].path=${root}/eval.jsonl`,
      "stages[0].buffer.total_steps=2",
      "stages[1].buffer.total_steps=2",
      "stages[1].buffer.batch_size=3",
      "stages[1].algorithm.repeat_times=2",
      "explorer.runner_num=3",
      "monitor.console=false",
      "monitor.tensorboard=false",
    ],
  });
  const summary = await runConfig(config, quiet);
  const rows = await metricsRows(summary.runDir);
  // Steps count per stage. SFT: eval at its start (0) and end (2); GRPO: at its start and end.
  const evals = rows.filter((r) => "eval/held_out/success" in r);
  const counts = ["count", "failed_tasks"].map((k) => `eval/held_out/${k}`);
  const evalRows = evals.map((r) => [r.step, ...counts.map((k) => r[k])]);
  assertEquals(evalRows, [[0, 4, 0], [2, 4, 0], [0, 4, 0], [2, 4, 0]]);
  const explored = rows.filter((r) => "rollout/reward_mean" in r);
  assertEquals(explored.length, 2);
  for (const key of ["success", "turns", "tool_calls", "malformed_tool_calls"]) {
    assertEquals(explored.every((r) => Number.isFinite(r[`rollout/${key}`])), true, key);
  }

  const tokenizer = await loadCharTokenizer(`${EXAMPLE}model/char_tokenizer.json`);
  assertEquals(tokenizer.chatTemplate, CHAR_TOOL_CHAT_TEMPLATE);
  const { experiences } = await readExperienceDir(`${summary.runDir}/grpo/experiences`);
  assertEquals(experiences.length, 2 * 3 * 2); // steps x tasks x repeat_times, one per episode
  for (const exp of experiences) {
    const parts = spans(exp.actionMask);
    assertEquals(parts[0][2], exp.promptLength);
    const prompt = tokenizer.decode(exp.tokens.slice(0, exp.promptLength));
    assertEquals(/^<bos><tools>add<\/tools>\d{3}\+\d{3}<eos>$/.test(prompt), true, prompt);
    const turns = parts.slice(1).filter(([m]) => m === 1);
    let toolCalls = 0;
    let malformed = 0;
    parts.slice(1).forEach(([m, start, end], i, rest) => {
      const text = tokenizer.decode(exp.tokens.slice(start, end));
      if (m === 1) {
        assertEquals(exp.logprobs.slice(start, end).every((lp) => lp < 0), true, text);
        const read = hermes.parse(text.replace(/<eos>$/, ""));
        toolCalls += read.calls.length;
        malformed += read.malformed;
        return;
      }
      // After a model turn that called add: the results, after an <eos> the model did not
      // write when its turn ran out of tokens.
      const [, callStart, callEnd] = rest[i - 1];
      const call = hermes.parse(
        tokenizer.decode(exp.tokens.slice(callStart, callEnd)).replace(/<eos>$/, ""),
      );
      const results = call.calls.map((c) =>
        `<tool_response>${addResult(c.arguments)}</tool_response><eos>`
      );
      assertEquals(text.replace(/^<eos>/, ""), results.join(""));
    });
    const lastTurn = tokenizer.decode(exp.tokens.slice(turns.at(-1)![1], turns.at(-1)![2]));
    const sum = prompt.match(/\d+/g)!.map(Number).reduce((a, b) => a + b);
    const answered = hermes.parse(lastTurn.replace(/<eos>$/, "")).calls.length === 0 &&
      lastTurn.replace(/<eos>$/, "").trim() === String(sum);
    assertEquals(exp.metrics?.success, Number(answered));
    assertEquals(exp.metrics?.turns, turns.length);
    assertEquals(exp.metrics?.tool_calls, toolCalls);
    assertEquals(exp.metrics?.malformed_tool_calls, malformed);
    const trained = exp.actionMask.filter((m) => m === 1).length;
    assertEquals(exp.metrics?.trained_tokens, trained);
    assertEquals(exp.metrics?.masked_tokens, exp.tokens.length - trained);
  }
  await Deno.remove(root, { recursive: true });
});

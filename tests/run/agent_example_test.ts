/**
 * The agent example (examples/agent/), shortened with `--set` overrides: a run with
 * `enable_openai_api: true` whose workflow talks to the policy only through the official
 * `openai` client trains a few GRPO steps, and every experience is the recorded conversation
 * with action mask 1 exactly on the tokens the model generated.
 */

import { assertEquals } from "../_asserts.ts";
import { readExperienceDir } from "../../src/buffer/experience_io.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { loadCharTokenizer } from "../../src/model/char_tokenizer.ts";
import { loadPlugins } from "../../src/run/plugins.ts";
import { runConfig } from "../../src/run/run.ts";
import { metricsRows, quiet, trainRows } from "./_fixture.ts";

const EXAMPLE = new URL("../../examples/agent/", import.meta.url).pathname;

/** The calculator's reply to `expression`, computed here independently of the plugin. */
function calculatorReply(expression: string): string {
  const terms = expression.split("+");
  const valid = terms.every((t) => /^\d+$/.test(t));
  return valid ? `=${terms.map(Number).reduce((a, b) => a + b)}` : "=?";
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

Deno.test("the agent example trains through the OpenAI API; masks cover only model tokens", async () => {
  const [plugin] = await loadPlugins([{ path: `${EXAMPLE}plugin`, optional: false }]);
  assertEquals(plugin.registered, ['workflow "calculator_agent"']);
  const root = await Deno.makeTempDir();
  const config = await loadConfig(`${EXAMPLE}config.yaml`, {
    overrides: [
      `checkpoint_root_dir=${root}`,
      "buffer.total_steps=2",
      "buffer.batch_size=3",
      "algorithm.repeat_times=2",
      "explorer.runner_num=3",
      "buffer.explorer_input.eval_tasksets=[]",
      "monitor.console=false",
      "monitor.tensorboard=false",
    ],
  });
  const summary = await runConfig(config, quiet);
  const rows = await metricsRows(summary.runDir);
  assertEquals(trainRows(rows).map((r) => r.step), [1, 2]);
  const explored = rows.filter((r) => "rollout/reward_mean" in r);
  assertEquals(explored.length, 2);

  const tokenizer = await loadCharTokenizer(`${EXAMPLE}model/char_tokenizer.json`);
  const { experiences } = await readExperienceDir(`${summary.runDir}/experiences`);
  assertEquals(experiences.length, 2 * 3 * 2); // steps x tasks x repeat_times, one per episode
  let multiTurn = 0;
  for (const exp of experiences) {
    const parts = spans(exp.actionMask);
    // The prompt is the chat template of the question: <bos>QUESTION<eos>, mask 0.
    assertEquals(parts[0][2], exp.promptLength);
    const prompt = tokenizer.decode(exp.tokens.slice(0, exp.promptLength));
    assertEquals(/^<bos>\d\d\+\d\d<eos>$/.test(prompt), true, prompt);
    // Then model turns (mask 1, each with its sampled log-probs) and environment replies (mask
    // 0, log-prob 0): "=RESULT<eos>" or "=?<eos>" after a tool call ("c:..."), "?<eos>" after a
    // wrong answer, each after an <eos> the model did not write when its turn ran out of tokens.
    const turns = parts.slice(1);
    assertEquals(turns.length % 2, 1, "ends with a model turn");
    turns.forEach(([m, start, end], i) => {
      const text = tokenizer.decode(exp.tokens.slice(start, end));
      const logprobs = exp.logprobs.slice(start, end);
      if (m === 1) {
        assertEquals(logprobs.every((lp) => lp < 0), true, text);
        return;
      }
      assertEquals(logprobs.every((lp) => lp === 0), true, text);
      const [, before] = /^(?:<eos>)?(.*)<eos>$/.exec(text) ?? [];
      const [, callStart, callEnd] = turns[i - 1];
      const call = /^c:(.*?)(<eos>)?$/.exec(tokenizer.decode(exp.tokens.slice(callStart, callEnd)));
      assertEquals(before, call ? calculatorReply(call[1]) : "?", text);
    });
    multiTurn += turns.length > 1 ? 1 : 0;
    assertEquals(exp.metrics?.turns, (turns.length + 1) / 2);
  }
  // A model from scratch answers wrong: most episodes get the environment's reply and go on.
  assertEquals(multiTurn > 0, true, "no multi-turn episode");
  await Deno.remove(root, { recursive: true });
});

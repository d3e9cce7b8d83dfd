import type { Experience } from "../../src/buffer/experience.ts";
import { createWorkflow, Episode } from "../../src/workflow/mod.ts";
import type { RolloutOptions } from "../../src/workflow/rollout_model.ts";
import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";
import { makeTask, scriptedLogprob, ScriptedModel, TOKENIZER } from "./_scripted_model.ts";
import { TOOL_TOKENIZER, TOOLS } from "../serve/_tool_server.ts";

const QUESTION =
  'I am thinking of an integer between 1 and 100. Guess it. After each guess I will say "higher", "lower" or "correct". Reply with one number only.';

/** Per-token pieces of an expected transcript: model replies (mask 1) and environment text. */
type Piece = { model: string } | { env: string };

/** Checks `exp` is `prompt` then `pieces`, with mask 1 and scripted log-probs on model tokens. */
function assertTranscript(exp: Experience, prompt: string, pieces: Piece[]) {
  const tokens = TOKENIZER.encode(prompt);
  const mask = tokens.map(() => 0);
  const logprobs = tokens.map(() => 0);
  for (const piece of pieces) {
    const ids = "model" in piece
      ? [...TOKENIZER.encode(piece.model), TOKENIZER.eosId!]
      : TOKENIZER.encode(piece.env);
    tokens.push(...ids);
    mask.push(...ids.map(() => "model" in piece ? 1 : 0));
    logprobs.push(...ids.map((_, i) => "model" in piece ? scriptedLogprob(i) : 0));
  }
  assertEquals(exp.tokens, tokens);
  assertEquals(exp.promptLength, TOKENIZER.encode(prompt).length);
  assertEquals(exp.actionMask, mask);
  assertEquals(exp.logprobs, logprobs);
}

const guessTask = (secret: unknown, overrides = {}) =>
  makeTask({ secret }, { workflow: "guess_number", ...overrides });

Deno.test("guess_number: the mask is 1 exactly on the model's tokens across turns", async () => {
  const model = new ScriptedModel(["50", "I guess 25", "hmm", "37"]);
  model.policyVersion = 3;
  const [exp] = await createWorkflow(guessTask(37), { model }).run();
  assertTranscript(exp, `<bos>${QUESTION}<eos>`, [
    { model: "50" },
    { env: "lower<eos>" },
    { model: "I guess 25" },
    { env: "higher<eos>" },
    { model: "hmm" },
    { env: "Reply with one number between 1 and 100.<eos>" },
    { model: "37" },
  ]);
  assertEquals([exp.reward, exp.metrics], [0.4, { accuracy: 1, turns: 4 }]);
  assertEquals([exp.info.taskId, exp.info.runId, exp.info.policyVersion], ["0.3", 0, 3]);
  assertEquals(model.calls.map((c) => c.kind), ["chat", "generate", "generate", "generate"]);
  assertEquals(model.calls.map((c) => c.options.n), [1, 1, 1, 1]);
  assertEquals(model.calls[3].promptTokens, exp.tokens.slice(0, -3));
});

Deno.test("guess_number: an unsolved episode stops at max_turns with reward 0", async () => {
  const model = new ScriptedModel(["10", "90"]);
  const task = guessTask(37, { workflowArgs: { max_turns: 2, use_chat_template: false } });
  const [exp] = await createWorkflow(task, { model }).run();
  assertTranscript(exp, QUESTION, [{ model: "10" }, { env: "\nhigher\n" }, { model: "90" }]);
  assertEquals([exp.reward, exp.metrics], [0, { accuracy: 0, turns: 2 }]);
});

Deno.test("guess_number: n runs independent episodes; bad rows and args name the task", async () => {
  const model = new ScriptedModel(["37", "37"]);
  const exps = await createWorkflow(guessTask(37, { rolloutArgs: { n: 2 } }), { model }).run();
  assertEquals(exps.map((e) => [e.info.runId, e.reward]), [[0, 1], [1, 1]]);
  assertThrows(
    () => createWorkflow(guessTask(101), { model }),
    Error,
    'Task "0.3" has "secret" = 101; expected an integer in [1, 100]',
  );
  assertThrows(
    () => createWorkflow(guessTask(3, { workflowArgs: { max_turns: 0 } }), { model }),
    Error,
    'Cannot configure workflow "guess_number": key "max_turns" expected an integer >= 1',
  );
});

Deno.test("Episode: keeps the oldest policy version and rejects a truncated transcript", async () => {
  const model = new ScriptedModel(["a", "b", "c"]);
  model.policyVersion = 5;
  const episode = new Episode(model, "go");
  await episode.act();
  model.policyVersion = 6;
  episode.observe("more");
  await episode.act();
  const exp = episode.toExperience(makeTask({}), 1, null);
  assertEquals([exp.info.policyVersion, exp.reward, exp.promptText], [5, null, "go"]);
  assertEquals(exp.responseText, "a<eos>\nmore\nb<eos>");

  class Truncating extends ScriptedModel {
    override generate(prompt: string | readonly number[], options?: RolloutOptions) {
      return super.generate(typeof prompt === "string" ? prompt : prompt.slice(1), options);
    }
  }
  const short = new Episode(new Truncating(["a", "b"]), "go");
  await short.act();
  await assertRejects(
    () => short.act(),
    Error,
    "Cannot continue the episode at turn 2: the model kept 3 of its 4 tokens (max_prompt_tokens)",
  );
});

Deno.test("Episode with tools: the model's call kept as sampled, tool results rendered after it", async () => {
  const call = '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>';
  const model = new ScriptedModel([call, "noon"], TOOL_TOKENIZER);
  const episode = new Episode(model, [{ role: "user", content: "time" }], {}, { tools: TOOLS });
  await episode.act();
  episode.observeToolResults([{ tool_call_id: "call_1", content: "12" }]);
  await episode.act();
  const exp = episode.toExperience(makeTask({}), 0, 1);
  const eos = "<eos>";
  const parts: [string, number][] = [
    [`<bos><tools>get_weather,get_time</tools>time${eos}`, 0],
    [call + eos, 1], // with spaces the template would not write
    [`<tool_response>12</tool_response>${eos}`, 0],
    [`noon${eos}`, 1],
  ];
  const expected = parts.flatMap(([text, mask]) =>
    TOOL_TOKENIZER.encode(text).map((id) => [id, mask])
  );
  assertEquals(exp.tokens.map((id, t) => [id, exp.actionMask[t]]), expected);
  assertEquals(
    model.calls[1].promptTokens,
    exp.tokens.slice(0, model.calls[1].promptTokens.length),
  );
});

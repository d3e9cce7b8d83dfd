/**
 * Auxiliary models: a tiny ONNX scorer (MatMul + Add + Sigmoid over features of a response,
 * written with the ONNX protobuf helpers) scores responses inside an async reward fn run by a
 * workflow, matching the same formula computed here in f64; a Hugging Face auxiliary model
 * generates like the model it was saved from and is served over the run's API under its name;
 * wrong names, kinds and sections are errors that list what is configured.
 */

import { AuxiliaryModels } from "../../src/auxiliary/auxiliary_models.ts";
import type { StageConfig } from "../../src/config/run_config.ts";

/** One of `explorer.auxiliary_models`. */
type AuxiliaryModelSection = StageConfig["explorer"]["auxiliaryModels"][number];
import { concatBytes, encodeOnnxModel } from "../../src/export/onnx_proto.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { POLICY_MODEL_ID, startStageServer } from "../../src/serve/stage_server.ts";
import { createWorkflow, REWARD_FUNCTIONS } from "../../src/workflow/mod.ts";
import { PolicyRolloutModel } from "../../src/workflow/policy_rollout_model.ts";
import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { tinyModel, TOKENIZER as TINY_TOKENIZER } from "../serve/_tiny_server.ts";
import { makeTask, ScriptedModel } from "./_scripted_model.ts";

const WEIGHTS = [0.3, -0.5, 2];
const BIAS = -0.25;

/** The scorer's features of `response` to a task whose answer is `answer`. */
const features = (response: string, answer: string) => [
  response.length,
  (response.match(/\d/g) ?? []).length,
  Number(response.trim() === answer),
];

/** Writes the scorer: sigmoid(features [batch, 3] @ WEIGHTS [3, 1] + BIAS). */
async function writeScorer(path: string): Promise<void> {
  const floats = (values: number[]) => new Uint8Array(new Float32Array(values).buffer);
  const { model } = encodeOnnxModel({
    name: "scorer",
    nodes: [
      { opType: "MatMul", inputs: ["features", "w"], outputs: ["z"] },
      { opType: "Add", inputs: ["z", "b"], outputs: ["logit"] },
      { opType: "Sigmoid", inputs: ["logit"], outputs: ["score"] },
    ],
    inputs: [{ name: "features", shape: ["batch", 3] }],
    outputs: [{ name: "score", shape: ["batch", 1] }],
    initializers: [
      { name: "w", type: "float", dims: [3, 1], data: floats(WEIGHTS) },
      { name: "b", type: "float", dims: [1], data: floats([BIAS]) },
    ],
  });
  await Deno.writeFile(path, concatBytes(model));
}

const section = (over: Partial<AuxiliaryModelSection>): AuxiliaryModelSection => ({
  name: "scorer",
  maxPromptTokens: 16,
  maxResponseTokens: 8,
  temperature: 1,
  ...over,
});

REWARD_FUNCTIONS.register("onnx_score", {
  description: "test: an ONNX auxiliary model's score of the response",
  defaultArgs: { model: "scorer" },
  async compute({ response, task, auxiliaryModels }, args) {
    const answer = String(task.rawTask.answer);
    const [score] = await auxiliaryModels.onnx(args.model as string).score([
      features(response, answer),
    ]);
    return { reward: score, metrics: { accuracy: Number(response.trim() === answer) } };
  },
});

Deno.test("an ONNX auxiliary model scores responses inside a reward fn", async () => {
  const dir = await Deno.makeTempDir();
  await writeScorer(`${dir}/scorer.onnx`);
  const gpu = await getGpu();
  await using auxiliaryModels = await AuxiliaryModels.open(
    [section({ onnxPath: `${dir}/scorer.onnx` })],
    gpu,
    0,
  );
  const replies = ["42", "4 2 and more", "x"];
  const model = new ScriptedModel(replies);
  const task = makeTask({ question: "40+2=", answer: "42" }, {
    rewardFn: "onnx_score",
    rolloutArgs: { n: 3 },
    workflowArgs: { use_chat_template: false },
  });
  const exps = await createWorkflow(task, { model, auxiliaryModels }).run();
  const expected = replies.map((r) => {
    const z = features(r, "42").reduce((sum, f, i) => sum + f * WEIGHTS[i], BIAS);
    return 1 / (1 + Math.exp(-z));
  });
  assertClose(exps.map((e) => e.reward!), expected, { atol: 1e-6, rtol: 0, label: "rewards" });
  assertEquals(exps.map((e) => e.metrics?.accuracy), [1, 0, 0]);

  const scorer = auxiliaryModels.onnx("scorer");
  assertEquals([scorer.inputNames, scorer.outputNames], [["features"], ["score"]]);
  await assertRejects(() => scorer.score([[1, 2, 3], [1]]), Error, "row 1 has 1");
  const noModel = makeTask({ question: "1", answer: "1" }, { rewardFn: "onnx_score" });
  await assertRejects(
    () => createWorkflow(noModel, { model: new ScriptedModel(["1"]) }).run(),
    Error,
    'Cannot find auxiliary model "scorer": configured (explorer.auxiliary_models): none',
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a Hugging Face auxiliary model generates like its source and is served under its name", async () => {
  const dir = await Deno.makeTempDir();
  const source = await tinyModel(9);
  await source.save(dir);
  const gpu = await getGpu();
  await using auxiliaryModels = await AuxiliaryModels.open(
    [section({ name: "judge", modelPath: dir })],
    gpu,
    0,
  );
  const prompt = TINY_TOKENIZER.encode("12+3");
  const [own] = await source.generate([prompt], { temperature: 0, maxTokens: 8 });
  const [aux] = await auxiliaryModels.generator("judge").generate(prompt, { temperature: 0 });
  assertEquals([aux.responseTokens, aux.policyVersion], [own.tokens, 0]);
  assertThrows(
    () => auxiliaryModels.onnx("judge"),
    Error,
    'Cannot use auxiliary model "judge" as an ONNX model: it is a Hugging Face model; use generator("judge")',
  );

  const policy = await tinyModel(3);
  const rollout = new PolicyRolloutModel(policy, {
    maxPromptTokens: 16,
    maxResponseTokens: 8,
    defaults: { temperature: 1, topP: 1, topK: 0 },
    seed: 1,
  });
  const stage = {
    explorer: {
      rolloutModel: { enableOpenaiApi: true, openaiApiHost: "127.0.0.1", openaiApiPort: 0 },
    },
  } as unknown as StageConfig;
  const lines: string[] = [];
  const server = await startStageServer(stage, rollout, auxiliaryModels, (l) => lines.push(l));
  try {
    const models = await (await fetch(`${server!.url}/v1/models`)).json();
    assertEquals(models.data.map((m: { id: string }) => m.id), [POLICY_MODEL_ID, "judge"]);
    const reply = await (await fetch(`${server!.url}/v1/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "judge", prompt: "12+3", temperature: 0 }),
    })).json();
    assertEquals(reply.choices[0].text, own.text);
    assertEquals(lines.length, 1);
  } finally {
    await server!.close();
    rollout.destroy();
    policy.destroy();
    source.destroy();
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("auxiliary model sections need exactly one of model_path and onnx_path, and distinct names", async () => {
  const gpu = await getGpu();
  const dir = await Deno.makeTempDir();
  const onnxPath = `${dir}/scorer.onnx`;
  await writeScorer(onnxPath);
  for (const paths of [{}, { onnxPath, modelPath: dir }]) {
    await assertRejects(
      () => AuxiliaryModels.open([section(paths)], gpu, 0),
      Error,
      'Cannot open auxiliary model "scorer": expected exactly one of model_path and onnx_path',
    );
  }
  await assertRejects(
    () => AuxiliaryModels.open([section({ onnxPath }), section({ onnxPath })], gpu, 0),
    Error,
    'Cannot open auxiliary model "scorer": another auxiliary model has this name',
  );
  await assertRejects(
    () => AuxiliaryModels.open([section({ onnxPath: `${dir}/missing.onnx` })], gpu, 0),
    Error,
    `Cannot open auxiliary model "scorer": Cannot load ONNX model ${dir}/missing.onnx`,
  );
  await Deno.remove(dir, { recursive: true });
});

/**
 * Weights in half precision where nothing trains them: a BF16 checkpoint loaded `frozen` keeps
 * its matrices bf16 (vectors f32) and scores tokens as the f32 load does (the same values); a
 * bf16 copy of an f32 model (the explorer's) holds the rounded weights, follows each weight
 * transfer, and generates; a TrainStep whose KL coefficient is 0 needs no reference model.
 */

import { assertEquals } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { readVariables } from "../../src/graph/read_variables.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { parameterSpecs } from "../../src/model/parameters.ts";
import { createModel, loadModel } from "../../src/model/policy.ts";
import { writeCheckpoint } from "../../src/model/safetensors.ts";
import { copyModel, transferWeights } from "../../src/model/weight_transfer.ts";
import { TrainStep } from "../../src/trainer/train_step.ts";
import { KL_FN } from "../../src/algorithm/kl.ts";
import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";
import { configure } from "../../src/util/registry.ts";
import { fromBf16, toBf16 } from "../../src/util/half.ts";
import { inTempDir } from "../_temp_dir.ts";
import { tinyLlamaConfig } from "../_tiny_llama.ts";

const RAW = { ...tinyLlamaConfig(23), num_hidden_layers: 2, torch_dtype: "bfloat16" };
const SEQUENCES = [[1, 4, 9, 16, 22, 3], [7, 7, 0, 12]];

Deno.test("a BF16 checkpoint loaded frozen keeps bf16 matrices and scores as the f32 load", async () => {
  await inTempDir("rft-frozen-", async (dir) => {
    const cfg = parseHfConfig(RAW);
    const params = initParameters(cfg, 3, 0.4);
    const tensors = parameterSpecs(cfg).map((s) => ({
      name: s.name,
      shape: s.shape,
      data: params.get(s.name)!,
    }));
    await writeCheckpoint(dir, tensors, { dtype: "BF16" });
    await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify(RAW));
    const gpu = await getGpu();
    using widened = await loadModel(dir, { gpu });
    using frozen = await loadModel(dir, { gpu, frozen: true });
    for (const v of frozen.variables()) {
      assertEquals(v.dtype, v.shape.length === 2 ? "bf16" : "f32", v.name);
    }
    const bytes = (m: typeof frozen) => m.variables().reduce((n, v) => n + v.buffer.size, 0);
    assertEquals(bytes(frozen) < 0.6 * bytes(widened), true, "half the bytes");
    const expected = await widened.logprobs(SEQUENCES);
    const got = await frozen.logprobs(SEQUENCES);
    got.forEach((lp, i) => assertClose(lp, expected[i], { atol: 1e-5, rtol: 1e-5 }));
  });
});

Deno.test("a bf16 copy holds the rounded weights, follows transfers and generates", async () => {
  const gpu = await getGpu();
  const cfg = parseHfConfig(RAW);
  using model = await createModel(RAW, initParameters(cfg, 4, 0.4), { gpu });
  using copy = await copyModel(model, "bf16");
  const rounded = async () => {
    const source = await readVariables(gpu.device, model.variables());
    const target = await readVariables(gpu.device, copy.variables());
    for (const v of copy.variables()) {
      const want = v.dtype === "bf16" ? fromBf16(toBf16(source.get(v.name)!)) : source.get(v.name)!;
      assertEquals([...target.get(v.name)!], [...want], v.name);
    }
  };
  await rounded();
  // New trainer weights (an update), transferred: the copy follows.
  const step = new TrainStep(model, {
    policyLoss: configure(POLICY_LOSS_FN, "sft"),
    optimizer: { lr: 0.1 },
  });
  const tokens = SEQUENCES[0];
  await step.step([{
    tokens,
    promptLength: 2,
    actionMask: tokens.map((_, t) => Number(t >= 2)),
    logprobs: tokens.map(() => 0),
    reward: 0,
    info: { taskId: "t", runId: 0, policyVersion: 0, eid: "t-0" },
  }]);
  step.destroy();
  await transferWeights(model.trainableVariables(), copy.trainableVariables(), gpu);
  await rounded();
  const [sample] = await copy.generate([[1, 4, 9]], { maxTokens: 5, temperature: 0 });
  assertEquals(sample.tokens.length, 5);
  const [lpCopy] = await copy.logprobs([[1, 4, 9, ...sample.tokens]]);
  const [lpModel] = await model.logprobs([[1, 4, 9, ...sample.tokens]]);
  assertClose(lpCopy, lpModel, { atol: 0.05, rtol: 0.05, label: "bf16 copy near f32" });
});

Deno.test("a KL loss with kl_coef 0 needs no reference model (TRL's beta 0)", async () => {
  const gpu = await getGpu();
  using model = await createModel(RAW, initParameters(parseHfConfig(RAW), 5), { gpu });
  for (const [coef, needs] of [[0, false], [0.001, true]] as const) {
    const step = new TrainStep(model, {
      policyLoss: configure(POLICY_LOSS_FN, "ppo"),
      klLoss: configure(KL_FN, "k2", { kl_coef: coef }),
      optimizer: { lr: 0.1 },
    });
    assertEquals(step.needsReference, needs, `kl_coef ${coef}`);
    step.destroy();
  }
});

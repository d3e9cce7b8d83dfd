/**
 * Activation recomputation per decoder layer (`BuildOptions.recompute`): the gradients of every
 * weight equal the stored graph's within 1e-5 for each family's gradient-check config and for a
 * LoRA adapter (B non-zero) on all linear modules, and a deeper model's training graph holds
 * fewer bytes with it.
 */

import { assertClose } from "../_assert_close.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { grad } from "../../src/graph/autodiff.ts";
import { compileGraph } from "../../src/graph/executable.ts";
import { Graph } from "../../src/graph/graph.ts";
import { createModel, type PolicyModel } from "../../src/model/policy.ts";
import { initParameters } from "../../src/model/init.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { createLoraAdapter, initLoraParameters, loraTargets } from "../../src/model/lora.ts";
import { scoredHidden } from "../../src/model/transformer.ts";
import { tokenScores } from "../../src/model/token_scores.ts";
import { uniformArray } from "../../src/util/random.ts";
import {
  GRADCHECK_GPT2,
  GRADCHECK_LLAMA,
  GRADCHECK_SEQUENCES,
  logprobGradients,
} from "../_model_gradcheck.ts";

const LEN = 8;

/** A model of `raw` with random weights (seeded). */
async function randomModel(raw: Record<string, unknown>, seed: number): Promise<PolicyModel> {
  const params = initParameters(parseHfConfig(raw), seed, 0.3);
  return await createModel(raw, params, { gpu: await getGpu() });
}

/** The gradients with and without recomputation agree within 1e-5. */
async function assertSameGradients(model: PolicyModel, label: string): Promise<void> {
  const variables = model.trainableVariables();
  const projection = uniformArray(GRADCHECK_SEQUENCES.length * LEN, 17);
  const stored = await logprobGradients(model, variables, projection, LEN);
  const recomputed = await logprobGradients(model, variables, projection, LEN, { recompute: true });
  stored.forEach((expected, i) =>
    assertClose(recomputed[i], expected, {
      atol: 1e-5,
      rtol: 1e-5,
      label: `${label}: gradient of ${variables[i].name}`,
    })
  );
}

Deno.test("recomputed layers give the stored gradients: llama (GQA, untied) and gpt2", async () => {
  for (const [name, raw] of [["llama", GRADCHECK_LLAMA], ["gpt2", GRADCHECK_GPT2]] as const) {
    const model = await randomModel(raw, 3);
    try {
      await assertSameGradients(model, name);
    } finally {
      model.destroy();
    }
  }
});

Deno.test("recomputed layers give the stored gradients of a LoRA adapter on all linear modules", async () => {
  const model = await randomModel(GRADCHECK_LLAMA, 4);
  try {
    const settings = { rank: 2, alpha: 4, targetModules: ["all-linear"] };
    const values = initLoraParameters(loraTargets(model.config, settings.targetModules), 2, 5);
    // B starts at zero; random B makes every adapter's gradient path count.
    for (const [name, data] of values) {
      if (name.includes("lora_B")) data.set(uniformArray(data.length, 6));
    }
    model.attachLora(await createLoraAdapter(model.gpu, model.config, settings, values));
    await assertSameGradients(model, "lora");
  } finally {
    model.destroy();
  }
});

Deno.test("a training graph with recomputed layers holds fewer bytes", async () => {
  const raw = { ...GRADCHECK_LLAMA, hidden_size: 32, intermediate_size: 96, num_hidden_layers: 6 };
  const model = await randomModel(raw, 7);
  try {
    const held = async (recompute: boolean) => {
      const g = new Graph();
      const input = (n: string) => g.input([4, 64], "i32", n);
      const inputs = {
        ids: input("ids"),
        positions: input("positions"),
        segments: input("segments"),
      };
      const w = model.weights(g);
      const hidden = scoredHidden(model.config, w, inputs, 0, { recompute });
      const { logp } = tokenScores(model.config, w, hidden, input("targets"), { recompute });
      const grads = grad(logp, model.variables().map((v) => g.variable(v)));
      const exe = await compileGraph(model.gpu, grads, `recompute:${recompute}`);
      exe.destroy();
      return exe.stats.slotBytes;
    };
    const [stored, recomputed] = [await held(false), await held(true)];
    if (!(recomputed < 0.6 * stored)) {
      throw new Error(`recomputed graph holds ${recomputed} bytes, the stored one ${stored}`);
    }
  } finally {
    model.destroy();
  }
});

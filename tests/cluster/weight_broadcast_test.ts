/**
 * Weights through the object store: a version published from one model and loaded into another
 * (differently initialised) gives it the same parameters, bit for bit in f32 and rounded to
 * bfloat16 in bf16; the KV names the newest version; versions below `keepFrom` are deleted. With
 * a LoRA adapter only the adapter travels.
 */

import { assertEquals } from "../_asserts.ts";
import { fromBf16, toBf16 } from "../../src/util/half.ts";
import { NatsLink } from "../../src/cluster/nats_link.ts";
import {
  loadWeights,
  newestWeights,
  publishWeights,
  weightBytes,
} from "../../src/cluster/weight_broadcast.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { createModel } from "../../src/model/policy.ts";
import { createLoraAdapter, initLoraParameters, loraTargets } from "../../src/model/lora.ts";
import { uniformArray } from "../../src/util/random.ts";
import { startNatsServer } from "../../bench/_nats_server.ts";
import { tinyLlamaConfig } from "../_tiny_llama.ts";

/** A link to the test's server under its own name. */
function openLink(url: string, name: string): Promise<NatsLink> {
  return NatsLink.open({ url, project: "t", name, stage: "main", log: () => {} });
}

Deno.test("weights published in f32 or bf16 load into another model of the same shape", async () => {
  await using server = await startNatsServer();
  await using link = await openLink(server.url, "weights");
  const raw = tinyLlamaConfig(11);
  const trainer = await createModel(raw, initParameters(parseHfConfig(raw), 1));
  const explorer = await createModel(raw, initParameters(parseHfConfig(raw), 2), {
    gpu: trainer.gpu,
  });
  try {
    const expected = await trainer.readParameters();
    await publishWeights(link, trainer, 1, 0, "f32");
    await loadWeights(link, explorer, 1, "f32");
    for (const [name, values] of await explorer.readParameters()) {
      assertEquals([...values], [...expected.get(name)!], name);
    }
    await publishWeights(link, trainer, 2, 2, "bf16");
    assertEquals(await newestWeights(link), {
      version: 2,
      bytes: weightBytes(trainer, "bf16"),
      dtype: "bf16",
    });
    assertEquals(weightBytes(trainer, "bf16") * 2, weightBytes(trainer));
    await loadWeights(link, explorer, 2, "bf16");
    for (const [name, values] of await explorer.readParameters()) {
      assertEquals([...values], [...fromBf16(toBf16(expected.get(name)!))], name);
    }
    assertEquals((await link.weights.list()).map((o) => o.name), ["v2"]);
  } finally {
    trainer.destroy();
    explorer.destroy();
  }
});

Deno.test("with LoRA only the adapter travels, into the explorer's adapter over the same base", async () => {
  await using server = await startNatsServer();
  await using link = await openLink(server.url, "lora-weights");
  const raw = tinyLlamaConfig(11);
  const cfg = parseHfConfig(raw);
  const base = initParameters(cfg, 1);
  const settings = { rank: 2, alpha: 4, targetModules: ["q_proj", "v_proj"] };
  const targets = loraTargets(cfg, settings.targetModules);
  const adapted = async (seed: number) => {
    const model = await createModel(raw, base);
    const values = initLoraParameters(targets, settings.rank, seed);
    for (const [name, data] of values) data.set(uniformArray(data.length, seed + name.length));
    model.attachLora(await createLoraAdapter(model.gpu, cfg, settings, values));
    return model;
  };
  const trainer = await adapted(1);
  const explorer = await adapted(2);
  try {
    const adapterValues = targets.reduce((n, t) => n + settings.rank * (t.inDim + t.outDim), 0);
    assertEquals(weightBytes(trainer), 4 * adapterValues);
    await publishWeights(link, trainer, 1, 0, "f32");
    await loadWeights(link, explorer, 1, "f32");
    assertEquals(await explorer.readLoraParameters(), await trainer.readLoraParameters());
    assertEquals(await explorer.logprobs([[1, 2, 3, 4]]), await trainer.logprobs([[1, 2, 3, 4]]));
  } finally {
    trainer.destroy();
    explorer.destroy();
  }
});

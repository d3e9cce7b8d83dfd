/**
 * Weights through the object store: a version published from one model and loaded into another
 * (differently initialised) gives it the same parameters, bit for bit in f32 and rounded to
 * bfloat16 in bf16; the KV names the newest version; versions below `keepFrom` are deleted.
 */

import { assertEquals } from "../_asserts.ts";
import { fromBf16, toBf16 } from "../../src/cluster/bf16.ts";
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
import { startNatsServer } from "../../bench/_nats_server.ts";
import { tinyLlamaConfig } from "../_tiny_llama.ts";

Deno.test("weights published in f32 or bf16 load into another model of the same shape", async () => {
  await using server = await startNatsServer();
  await using link = await NatsLink.open({
    url: server.url,
    project: "t",
    name: "weights",
    stage: "main",
    log: () => {},
  });
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

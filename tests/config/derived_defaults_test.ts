/**
 * The loader's derived defaults (`derived_defaults.ts`), as docs/config.md states them: every
 * key the schema marks `derived` is present after loading, each computed from the keys it
 * depends on; the train batch is batch_size * repeat_times in every mode and the experience
 * buffer holds 4 explore steps in mode both, whatever the sync offset; the algorithm type's
 * components and args fill what the section leaves out; RFT_NATS_URL makes a stage a cluster
 * stage. Trinity's lr_warmup_steps_ratio still loads (listed as ignored).
 */

import { loadConfig } from "../../src/config/load_config.ts";
import type { StageConfig } from "../../src/config/run_config.ts";
import { STAGE_SCHEMA } from "../../src/config/schema.ts";
import { camelCase, type FieldSchema } from "../../src/config/schema_fields.ts";
import { assertEquals } from "../_asserts.ts";
import { BASE, withFixture, writeConfig } from "./_fixture.ts";

/** Loads `text` (one stage) with environment `env`. */
async function loadStage(
  dir: string,
  text: string,
  env: Record<string, string> = {},
): Promise<StageConfig> {
  return (await loadConfig(await writeConfig(dir, text), { env })).stages[0];
}

/**
 * The key paths of the schema's `derived` entries whose value is absent in `value` (read beside
 * the schema: a list's items and an optional section's presence as they are in the value).
 */
function missingDerived(field: FieldSchema, value: unknown, path: string): string[] {
  if (value === undefined) return "derived" in field && field.derived ? [path] : [];
  if (field.type === "list") {
    return (value as unknown[]).flatMap((item, i) =>
      missingDerived(field.of, item, `${path}[${i}]`)
    );
  }
  if (field.type !== "section") return [];
  return Object.entries(field.fields).flatMap(([key, child]) => {
    const v = (value as Record<string, unknown>)[camelCase(key)];
    if (v === undefined && child.type === "section" && child.optional) return [];
    return missingDerived(child, v, path ? `${path}.${key}` : key);
  });
}

Deno.test("derived defaults: every derived key is present after loading", async () => {
  await withFixture(async (dir) => {
    const stage = await loadStage(
      dir,
      `${BASE}    tasksets: []
    eval_tasksets:
      - path: data/eval.jsonl
  trainer_input:
    sft_warmup_dataset:
      path: data/sft.jsonl
`,
    );
    assertEquals(missingDerived(STAGE_SCHEMA, stage, ""), []);
    // The walk sees an absent derived key: a stage without one is reported.
    const { criticLr: _, ...trainer } = stage.trainer;
    assertEquals(missingDerived(STAGE_SCHEMA, { ...stage, trainer }, ""), ["trainer.critic_lr"]);
  });
});

Deno.test("derived defaults: train_batch_size is batch_size * repeat_times in every mode", async () => {
  await withFixture(async (dir) => {
    for (const mode of ["both", "train", "explore"]) {
      const stage = await loadStage(
        dir,
        `${BASE}  batch_size: 3\nmode: ${mode}\nalgorithm:\n  repeat_times: 5\n`,
      );
      assertEquals(stage.buffer.trainBatchSize, 15, mode);
    }
    // The algorithm type's repeat_times when the section names none (dapo: 16).
    const dapo = await loadStage(dir, `${BASE}mode: train\nalgorithm:\n  algorithm_type: dapo\n`);
    assertEquals([dapo.algorithm.repeatTimes, dapo.buffer.trainBatchSize], [16, 8 * 16]);
    const given = await loadStage(dir, `${BASE}  train_batch_size: 7\nmode: train\n`);
    assertEquals(given.buffer.trainBatchSize, 7);
  });
});

Deno.test("derived defaults: the experience buffer holds 4 explore steps in mode both", async () => {
  await withFixture(async (dir) => {
    const capacity = async (extra: string) =>
      (await loadStage(dir, `${BASE}  batch_size: 3\n${extra}`)).buffer.trainerInput
        .experienceBuffer.capacity;
    // 4 x 3 tasks x 2 rollouts (grpo), whatever the explorer's lead.
    assertEquals(await capacity(""), 24);
    assertEquals(await capacity("synchronizer:\n  sync_offset: 3\n"), 24);
    assertEquals(await capacity("synchronizer:\n  sync_offset: 7\n"), 24);
    // Modes that write without a trainer drawing keep everything.
    assertEquals(await capacity("mode: explore\n"), undefined);
    assertEquals(await capacity("mode: train\n"), undefined);
    const given = "  trainer_input:\n    experience_buffer:\n      capacity: 5\n";
    assertEquals(await capacity(given), 5);
  });
});

Deno.test("derived defaults: components and args over the algorithm type's", async () => {
  await withFixture(async (dir) => {
    const dapo = await loadStage(
      dir,
      `${BASE}algorithm:
  algorithm_type: dapo
  policy_loss_fn_args: {clip_range_high: 0.3}
  kl_loss_fn: k3
`,
    );
    const a = dapo.algorithm;
    assertEquals(
      [a.sampleStrategy, a.advantageFn, a.policyLossFn, a.klLossFn, a.entropyLossFn],
      ["default", "grpo", "ppo", "k3", "default"],
    );
    assertEquals(a.advantageFnArgs, { std_threshold: 0 });
    assertEquals(a.policyLossFnArgs, {
      clip_range_low: 0.2,
      clip_range_high: 0.3,
      loss_agg_mode: "token-mean",
    });
    assertEquals(a.dynamicSampling.enable, true);
    // sft has no advantage fn: the key stays absent.
    const sftStage = await loadStage(
      dir,
      `model:\n  model_path: model\nmode: train\nalgorithm:\n  algorithm_type: sft\n` +
        `  optimizer: {lr: 0.5}\nbuffer:\n  trainer_input:\n    sft_warmup_dataset:\n` +
        `      path: data/sft.jsonl\n`,
    );
    assertEquals("advantageFn" in sftStage.algorithm, false);
    assertEquals(sftStage.algorithm.dynamicSampling.enable, false);
    assertEquals(sftStage.trainer.criticLr, sftStage.algorithm.optimizer.lr);
  });
});

Deno.test("derived defaults: tasksets take repeat_times, seed, name and workflow", async () => {
  await withFixture(async (dir) => {
    const stage = await loadStage(
      dir,
      `${BASE}      rollout_args: {temperature: 0.5}
    eval_tasksets:
      - path: data/eval.jsonl
      - path: data/eval.jsonl
        name: five
        repeat_times: 5
      - path: data/eval.jsonl
        name: n_wins
        repeat_times: 5
        rollout_args: {n: 3}
seed: 9
algorithm:
  repeat_times: 4
`,
    );
    const { taskset, evalTasksets } = stage.buffer.explorerInput;
    assertEquals(
      [taskset?.name, taskset?.seed, taskset?.repeatTimes, taskset?.rolloutArgs],
      ["train", 9, 4, { temperature: 0.5, n: 4 }],
    );
    assertEquals(
      evalTasksets.map((t) => [t.name, t.repeatTimes, t.rolloutArgs.n, t.defaultWorkflowType]),
      [["eval", 1, 1, "math_workflow"], ["five", 5, 5, "math_workflow"], [
        "n_wins",
        3,
        3,
        "math_workflow",
      ]],
    );
  });
});

Deno.test("derived defaults: an SFT dataset with messages_key is read as chats", async () => {
  await withFixture(async (dir) => {
    const dataset = (format: string) =>
      `model:\n  model_path: model\nmode: train\nalgorithm:\n  algorithm_type: sft\n` +
      `buffer:\n  trainer_input:\n    sft_warmup_dataset:\n      path: data/sft.jsonl\n` +
      `      format: ${format}\n`;
    const format = async (text: string) =>
      (await loadStage(dir, dataset(text))).buffer.trainerInput.sftWarmupDataset?.format;
    const plain = await format("{}");
    assertEquals([plain?.promptType, plain?.messagesKey], ["plaintext", undefined]);
    const keyed = await format("{messages_key: chat}");
    assertEquals([keyed?.promptType, keyed?.messagesKey], ["messages", "chat"]);
    const typed = await format("{prompt_type: messages}");
    assertEquals([typed?.promptType, typed?.messagesKey], ["messages", "message"]);
  });
});

Deno.test("derived defaults: RFT_NATS_URL makes the stage a cluster stage at that URL", async () => {
  await withFixture(async (dir) => {
    const local = await loadStage(dir, BASE);
    assertEquals([local.cluster.backend, local.cluster.url], ["none", "nats://127.0.0.1:4222"]);
    const env = { RFT_NATS_URL: "nats://10.0.0.2:4222" };
    const remote = await loadStage(dir, BASE, env);
    assertEquals([remote.cluster.backend, remote.cluster.url], ["nats", "nats://10.0.0.2:4222"]);
    const written = await loadStage(dir, `${BASE}cluster:\n  url: nats://a:1\n`, env);
    assertEquals([written.cluster.backend, written.cluster.url], ["nats", "nats://a:1"]);
  });
});

Deno.test("Trinity's lr_warmup_steps_ratio loads, listed once as ignored", async () => {
  await withFixture(async (dir) => {
    const file = await writeConfig(
      dir,
      `${BASE}algorithm:\n  optimizer:\n    lr_warmup_steps: -1\n    lr_warmup_steps_ratio: 0.1\n`,
    );
    const config = await loadConfig(file, { env: {} });
    assertEquals(
      config.ignoredTrinityKeys.includes("algorithm.optimizer.lr_warmup_steps_ratio"),
      true,
    );
    assertEquals(config.stages[0].algorithm.optimizer.lrWarmupSteps, 0);
  });
});

/**
 * `--set` reaches every key: each scalar key of rft's schema that has a default, set to that
 * default on the example's two-stage config, loads; and each Trinity key rft maps is settable
 * on the command line and wins over what the config writes (`trainer.grad_clip`,
 * `model.max_model_len`, `monitor.monitor_type`, ...), in every stage.
 */

import { stringify } from "yaml";
import { loadConfig } from "../../src/config/load_config.ts";
import type { FieldSchema } from "../../src/config/schema_fields.ts";
import { STAGE_SCHEMA } from "../../src/config/schema.ts";
import { MAPPED } from "../../src/config/trinity_rules.ts";
import { assertEquals } from "../_asserts.ts";

const EXAMPLE = new URL("../../examples/addition/config.yaml", import.meta.url).pathname;

/** Every scalar or enum key under `field` that has a default, with that default. */
function defaults(field: FieldSchema, path = ""): [string, unknown][] {
  if (field.type === "section") {
    if (field.optional) return [];
    return Object.entries(field.fields).flatMap(([key, child]) =>
      defaults(child, path ? `${path}.${key}` : key)
    );
  }
  if (
    (field.type === "enum" || field.type === "string" || field.type === "int" ||
      field.type === "number" || field.type === "bool") && field.default !== undefined
  ) {
    return [[path, field.default]];
  }
  return [];
}

Deno.test("--set sets every scalar key of rft's schema that has a default", async () => {
  const keys = defaults(STAGE_SCHEMA);
  assertEquals(keys.length > 40, true, `${keys.length} keys`);
  const failed: string[] = [];
  for (const [path, value] of keys) {
    const override = `${path}=${stringify(value).trim()}`;
    try {
      await loadConfig(EXAMPLE, { overrides: [override] });
    } catch (err) {
      failed.push(`${override}: ${(err as Error).message}`);
    }
  }
  assertEquals(failed, []);
});

/** A value for each mapped Trinity key that takes a scalar (the rest are sections or lists). */
const SAMPLES: Record<string, string> = {
  "model.max_model_len": "32",
  "model.top_k": "-1",
  "trainer.grad_clip": "0.25",
  "trainer.total_steps": "7",
  "trainer.max_checkpoints_to_keep": "0",
  "algorithm.optimizer.clip_grad": "0.5",
  "algorithm.optimizer.lr_warmup_steps": "-1",
  "algorithm.optimizer.lr_scheduler_type": "constant",
  "buffer.train_batch_size": "0",
  "buffer.explorer_input.default_eval_workflow_type": "simple_workflow",
  "buffer.trainer_input.experience_buffer.storage_type": "file",
  "explorer.runner_per_model": "4",
  "explorer.rollout_model.base_port": "8123",
  "explorer.rollout_model.api_key": "EMPTY",
  "synchronizer.sync_method": "nccl",
  "monitor.monitor_type": "wandb",
  "algorithm.loss_agg_mode": "null",
  "model.critic_model_path": '""',
  "model.custom_chat_template": "null",
  "model.chat_template_path": "null",
  "model.repetition_penalty": "1",
  "model.enable_thinking": "null",
};

Deno.test("--set sets every mapped Trinity key, over what the config writes, in every stage", async () => {
  const scalarKeys = Object.keys(MAPPED).filter((k) => !k.includes("[]") && k in SAMPLES);
  for (const key of Object.keys(SAMPLES)) assertEquals(key in MAPPED, true, `${key} is mapped`);
  const failed: string[] = [];
  for (const key of scalarKeys) {
    try {
      await loadConfig(EXAMPLE, { overrides: [`${key}=${SAMPLES[key]}`] });
    } catch (err) {
      failed.push(`${key}=${SAMPLES[key]}: ${(err as Error).message}`);
    }
  }
  assertEquals(failed, []);
  const set = async (...overrides: string[]) => (await loadConfig(EXAMPLE, { overrides })).stages;
  // The example writes none of these; each reaches both stages.
  for (const s of await set("trainer.grad_clip=0.25")) {
    assertEquals(s.algorithm.optimizer.gradClip, 0.25);
  }
  for (const s of await set("model.max_model_len=32")) {
    assertEquals(s.model.maxPromptTokens, 32 - s.model.maxResponseTokens);
  }
  for (const s of await set("monitor.monitor_type=wandb")) {
    assertEquals([s.monitor.monitors, s.monitor.tensorboard], [["wandb"], true]);
  }
  for (const s of await set("trainer.total_steps=7")) assertEquals(s.buffer.totalSteps, 7);
  // Over a value the config writes (the grpo stage's optimizer lr), a Trinity key wins too.
  const [, grpo] = await set("stages[1].algorithm.optimizer.grad_clip=2", "trainer.grad_clip=0.5");
  assertEquals(grpo.algorithm.optimizer.gradClip, 0.5);
});

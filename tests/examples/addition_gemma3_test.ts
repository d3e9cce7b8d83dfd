/**
 * The built-in example's task (examples/addition/config.yaml) with a tiny Gemma 3 as the policy,
 * made from scratch: its SFT step and a GRPO step run through the whole loop (generation through
 * the KV cache with sliding windows, rewards, a PPO-clip update of every Gemma parameter).
 */

import { assertEquals } from "../_asserts.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { readMetrics } from "../../src/monitor/metrics_log.ts";
import { runConfig } from "../../src/run/run.ts";
import { tinyGemma3Config } from "../_tiny_families.ts";

const EXAMPLE = new URL("../../examples/addition/", import.meta.url).pathname;

Deno.test("the addition example's SFT and GRPO steps run with a tiny Gemma 3", async () => {
  const root = await Deno.makeTempDir();
  try {
    const model = `${root}/gemma3`;
    await Deno.mkdir(model);
    await Deno.copyFile(`${EXAMPLE}/model/char_tokenizer.json`, `${model}/char_tokenizer.json`);
    const example = JSON.parse(await Deno.readTextFile(`${EXAMPLE}/model/config.json`));
    const { bos_token_id, eos_token_id, pad_token_id, vocab_size } = example;
    const config = {
      ...tinyGemma3Config(vocab_size, 3),
      hidden_size: 32,
      max_position_embeddings: 32,
      bos_token_id,
      eos_token_id,
      pad_token_id,
    };
    await Deno.writeTextFile(`${model}/config.json`, JSON.stringify(config));
    const run = await loadConfig(`${EXAMPLE}/config.yaml`, {
      overrides: [
        `checkpoint_root_dir=${root}`,
        "name=gemma3",
        `model.model_path=${model}`,
        "stages[0].buffer.total_steps=1",
        "stages[0].explorer.eval_interval=0",
        "stages[1].buffer.total_steps=1",
        "stages[1].buffer.batch_size=4",
        "explorer.eval_interval=0",
        "monitor.console=false",
        "monitor.tensorboard=false",
      ],
    });
    const summary = await runConfig(run, { log: () => {} });
    const { rows } = await readMetrics(`${summary.runDir}/metrics.jsonl`);
    const losses = rows.filter((r) => "actor/loss" in r).map((r) => r["actor/loss"]);
    assertEquals(losses.length, 2, "an SFT step and a GRPO step");
    assertEquals(losses.every(Number.isFinite), true, `losses ${losses}`);
    const rewards = rows.filter((r) => "rollout/reward_mean" in r);
    assertEquals(rewards.length, 1, "one explore step");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

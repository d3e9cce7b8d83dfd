/** `rft run` trainer options: PPO with a critic, micro-batches under a token budget, mini-batches. */

import assert from "node:assert/strict";
import { assertEquals } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { runConfig, STAGE_DONE_FILE } from "../../src/run/run.ts";
import { REWARD_FUNCTIONS } from "../../src/workflow/rewards/mod.ts";
import { metricsRows, quiet, readJson, trainRows, withFixture } from "./_fixture.ts";
import { loadCriticCheckpoint } from "../../src/trainer/checkpoint.ts";

// Rewards that vary with the response, so the critic has returns to fit.
REWARD_FUNCTIONS.register("digits_over_three_ppo_test", {
  description: "number of digits in the response / 3",
  defaultArgs: {},
  compute: ({ response }) => ({ reward: response.replace(/\D/g, "").length / 3, metrics: {} }),
});

Deno.test("ppo: the critic trains beside the policy, GAE uses its values, a resume continues it", async () => {
  await withFixture(async (f) => {
    const file = await f.writeConfig({
      algorithm: { algorithm_type: "ppo", repeat_times: 2 },
      buffer: { explorer_input: { default_reward_fn_type: "digits_over_three_ppo_test" } },
      trainer: { critic_lr: 0.05, ppo_epochs: 2 },
      explorer: { eval_interval: 0, eval_on_startup: false },
    }, "ppo.yaml");
    // (total_steps 3 from the base config)
    await runConfig(await loadConfig(file), quiet);
    const train = trainRows(await metricsRows(f.runDir("ppo")));
    assertEquals(train.map((r) => r.step), [1, 2, 3]);
    for (const r of train) {
      for (const key of ["critic/vf_loss", "critic/vpred_mean", "critic/grad_norm"]) {
        assert(Number.isFinite(r[key]), `${key} of step ${r.step}: ${r[key]}`);
      }
      assertEquals(r["actor/optimizer_steps"], 2);
      assertEquals(r["critic/lr"], 0.05);
    }
    // The value head starts at zero, so the first epoch of step 1 predicts 0 everywhere; the
    // second sees a critic already trained once: their mean is not 0. The rewards vary, so the
    // returns do, and the value loss is positive.
    assert(train[0]["critic/vpred_mean"] !== 0, JSON.stringify(train[0]));
    for (const r of train) assert(Number(r["critic/vf_loss"]) > 0, JSON.stringify(r));

    // Each checkpoint carries the critic: 2 critic updates per step (ppo_epochs 2).
    const checkpoints = `${f.runDir("ppo")}/checkpoints`;
    const state = (step: number) => readJson(`${checkpoints}/step_${step}/trainer_state.json`);
    assertEquals((await state(3)).critic_optimizer_step, 6);
    const critic3 = (await loadCriticCheckpoint(`${checkpoints}/step_3`))!;
    // As if killed before the stage ended, the same command with one more step resumes at
    // step 3 with the saved critic and its optimizer (a critic rebuilt from the policy would
    // restart its count at 0).
    await Deno.remove(`${f.runDir("ppo")}/${STAGE_DONE_FILE}`);
    const more = await f.writeConfig({
      algorithm: { algorithm_type: "ppo", repeat_times: 2 },
      buffer: {
        total_steps: 4,
        explorer_input: { default_reward_fn_type: "digits_over_three_ppo_test" },
      },
      trainer: { critic_lr: 0.05, ppo_epochs: 2 },
      explorer: { eval_interval: 0, eval_on_startup: false },
    }, "ppo.yaml");
    await runConfig(await loadConfig(more), quiet);
    assertEquals((await state(4)).critic_optimizer_step, 8);
    assertEquals(trainRows(await metricsRows(f.runDir("ppo"))).map((r) => r.step), [1, 2, 3, 4]);
    const critic4 = (await loadCriticCheckpoint(`${checkpoints}/step_4`))!;
    const head = (c: typeof critic3) => [...c.parameters.get("score.weight")!];
    assert(head(critic3).some((x) => x !== 0), "the saved value head was trained");
    assert(head(critic4).some((x, i) => x !== head(critic3)[i]), "step 4 trained it further");
  });
});

Deno.test("micro-batches and mini-batches through the config", async () => {
  await withFixture(async (f) => {
    const file = await f.writeConfig({
      name: "micro",
      buffer: { total_steps: 2 },
      trainer: { max_tokens_per_micro_batch: 16, ppo_mini_batch_size: 2 },
    }, "micro.yaml");
    await runConfig(await loadConfig(file), quiet);
    const train = trainRows(await metricsRows(f.runDir("micro")));
    assertEquals(train.length, 2);
    for (const r of train) {
      // 4 experiences in mini-batches of 2: two optimizer steps. Each sequence (a prompt of at
      // most 8 tokens and 3 response tokens) takes a 16-token row, so a 16-token budget holds
      // one row: two micro-batches per optimizer step (the metric is the mean over steps).
      assertEquals(r["actor/optimizer_steps"], 2);
      assertEquals(r["actor/micro_batches"], 2);
      assert(Number.isFinite(r["actor/loss"]));
    }
  });
});

Deno.test("mix: expert demonstrations from the SFT dataset join each batch, flagged for the loss", async () => {
  await withFixture(async (f) => {
    const file = await f.writeConfig({
      name: "mix",
      algorithm: {
        algorithm_type: "mix",
        repeat_times: 2,
        sample_strategy_args: { expert_data_ratio: 0.5 },
      },
    }, "mix.yaml");
    await runConfig(await loadConfig(file), quiet);
    const runDir = f.runDir("mix");
    const train = trainRows(await metricsRows(runDir));
    assertEquals(train.length, 3);
    for (const r of train) {
      // 4 rollouts a step; half of a batch of 4 is expert data: 2 + 2.
      assertEquals([r["sample/rl_count"], r["sample/expert_count"]], [2, 2]);
      // The loss mixes the parts with mu = 0.1: 0.9 * PPO on rollouts + 0.1 * SFT on experts.
      const usual = Number(r["actor/usual/pg_loss"]);
      const expert = Number(r["actor/expert/sft_loss"]);
      assert(expert > 0, JSON.stringify(r));
      assertClose(
        Float32Array.of(Number(r["actor/pg_loss"])),
        Float64Array.of(0.9 * usual + 0.1 * expert),
      );
    }
    // The expert buffer holds the 48 demonstrations of data/sft.jsonl.
    const parts = [...Deno.readDirSync(`${runDir}/expert`)].filter((e) =>
      e.name.endsWith(".parquet")
    );
    assert(parts.length > 0);
  });
});

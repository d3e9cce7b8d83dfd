import { loadConfig } from "../../src/config/load_config.ts";
import { resolvedConfigYaml } from "../../src/config/resolved_yaml.ts";
import { assertEquals } from "../_asserts.ts";
import { BASE, withFixture, writeConfig } from "./_fixture.ts";

/** A config that sets every key to something other than its default. */
const FULL = `mode: explore
project: countdown
name: exp-\${RUN:1}
checkpoint_root_dir: out
continue_from_checkpoint: false
seed: 7
model:
  model_path: model
  from_scratch: true
  max_prompt_tokens: 256
  max_response_tokens: 64
  temperature: 0.7
  top_p: 0.95
  top_k: 20
algorithm:
  algorithm_type: dapo
  repeat_times: 4
  sample_strategy: default
  sample_strategy_args: { warmup: 2 }
  advantage_fn: grpo
  advantage_fn_args: { std_threshold: 0.01 }
  policy_loss_fn: ppo
  policy_loss_fn_args: { clip_range_high: 0.28, loss_agg_mode: token-mean }
  kl_penalty_fn: none
  kl_penalty_fn_args: {}
  kl_loss_fn: k2
  kl_loss_fn_args: { kl_coef: 0.001 }
  entropy_loss_fn: default
  entropy_loss_fn_args: { entropy_coef: null }
  optimizer:
    lr: 2e-5
    betas: [0.9, 0.95]
    eps: 1e-6
    weight_decay: 0
    lr_warmup_steps: 10
    warmup_style: cosine
    min_lr_ratio: 0.1
    grad_clip: 0.5
buffer:
  batch_size: 4
  train_batch_size: 16
  total_epochs: 3
  total_steps: 100
  explorer_input:
    taskset:
      name: countdown_train
      path: data/train.jsonl
      split: test
      selector: shuffle
      seed: 9
      format:
        prompt_key: question
        response_key: answer
        system_prompt: "Think, then answer in \\\\boxed{}. Literal: $\${x}"
        messages_key: chat
      rollout_args: { n: 4, temperature: 0.9, top_p: 0.8, top_k: 5, max_tokens: 32 }
      workflow_args: { max_turns: 3, tools: [calc, search], nested: { a: 1 } }
      default_workflow_type: countdown
      default_reward_fn_type: countdown_reward
      reward_fn_args: { correct_reward: 2 }
    eval_tasksets:
      - path: data/eval.jsonl
        rollout_args: { n: 1, temperature: 0 }
    default_workflow_type: math_workflow
    default_reward_fn_type: accuracy
  trainer_input:
    experience_buffer:
      capacity: 256
      max_staleness: 2
      replay: { decay: 0.2, reuse_cooldown_ms: 50, max_use_count: 3 }
      path: data
    sft_warmup_dataset:
      path: data/sft.jsonl
      split: train
      format: { prompt_key: q, response_key: a, chosen_key: c, rejected_key: r }
explorer:
  runner_num: 2
  max_timeout: 60
  max_retry_times: 0
  eval_interval: 5
  eval_on_startup: false
  rollout_model: { enable_openai_api: true }
synchronizer:
  sync_interval: 2
  sync_offset: 1
  sync_style: dynamic_by_explorer
trainer:
  save_interval: 10
  max_checkpoints_to_keep: 2
  max_tokens_per_micro_batch: 4096
  ppo_epochs: 2
monitor:
  tensorboard: false
  console: false
data_processor:
  experience_pipeline:
    operators:
      - name: reward_filter
        args: { threshold: 0.1 }
      - name: dedup
`;

Deno.test("loadConfig: a config setting every key gives those values", async () => {
  await withFixture(async (dir) => {
    const [stage] = (await loadConfig(await writeConfig(dir, FULL), { env: {} })).stages;
    assertEquals(stage.name, "exp-1");
    assertEquals(stage.checkpointRootDir, `${dir}/out`);
    assertEquals(stage.algorithm.repeatTimes, 4);
    assertEquals(stage.algorithm.entropyLossFnArgs, { entropy_coef: null });
    assertEquals(stage.algorithm.optimizer.warmupStyle, "cosine");
    assertEquals(stage.buffer.explorerInput.taskset, {
      name: "countdown_train",
      path: `${dir}/data/train.jsonl`,
      split: "test",
      repeatTimes: 4,
      selector: "shuffle",
      seed: 9,
      featureKeys: [],
      selectorArgs: {},
      format: {
        promptKey: "question",
        responseKey: "answer",
        systemPrompt: "Think, then answer in \\boxed{}. Literal: ${x}",
        messagesKey: "chat",
      },
      rolloutArgs: { n: 4, temperature: 0.9, topP: 0.8, topK: 5, maxTokens: 32 },
      workflowArgs: { max_turns: 3, tools: ["calc", "search"], nested: { a: 1 } },
      defaultWorkflowType: "countdown",
      defaultRewardFnType: "countdown_reward",
      rewardFnArgs: { correct_reward: 2 },
    });
    assertEquals(stage.buffer.explorerInput.evalTasksets[0].rolloutArgs, { n: 1, temperature: 0 });
    assertEquals(stage.buffer.explorerInput.evalTasksets[0].defaultRewardFnType, "accuracy");
    assertEquals(stage.buffer.trainerInput.experienceBuffer, {
      capacity: 256,
      maxStaleness: 2,
      replay: { decay: 0.2, reuseCooldownMs: 50, maxUseCount: 3 },
      path: `${dir}/data`,
    });
    assertEquals(stage.synchronizer, {
      syncInterval: 2,
      syncOffset: 1,
      syncStyle: "explorer_driven",
    });
    assertEquals(stage.explorer.evalOnStartup, false);
    assertEquals(stage.dataProcessor.experiencePipeline.operators, [
      { name: "reward_filter", args: { threshold: 0.1 } },
      { name: "dedup", args: {} },
    ]);
  });
});

Deno.test("resolvedConfigYaml: loading it back gives the same stages", async () => {
  await withFixture(async (dir) => {
    for (
      const text of [
        FULL,
        BASE,
        `${BASE}stages:\n  - stage_name: a\n  - stage_name: b\n    seed: 3\n`,
      ]
    ) {
      const config = await loadConfig(await writeConfig(dir, text), { env: {} });
      await Deno.mkdir(`${dir}/elsewhere`, { recursive: true });
      const yaml = resolvedConfigYaml(config);
      const again = await loadConfig(await writeConfig(dir, yaml, "elsewhere/resolved.yaml"), {
        env: {},
      });
      assertEquals(again.stages, config.stages);
    }
  });
});

Deno.test('resolvedConfigYaml: one stage "main" is written flat, several as a stages list', async () => {
  await withFixture(async (dir) => {
    const single = await loadConfig(await writeConfig(dir, BASE), { env: {} });
    const flat = resolvedConfigYaml(single);
    assertEquals(flat.split("\n").slice(0, 3), [
      `# Resolved from ${dir}/config.yaml`,
      "mode: both",
      "project: rft",
    ]);
    const staged = await loadConfig(
      await writeConfig(dir, `${BASE}stages:\n  - stage_name: a\n  - stage_name: b\n`),
      { env: {} },
    );
    const list = resolvedConfigYaml(staged);
    assertEquals(list.split("\n").slice(1, 4), ["stages:", "  - stage_name: a", "    mode: both"]);
  });
});

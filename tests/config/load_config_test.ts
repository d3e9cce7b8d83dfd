import { resolve } from "node:path";
import { loadConfig } from "../../src/config/load_config.ts";
import type { StageConfig } from "../../src/config/run_config.ts";
import { assertEquals } from "../_asserts.ts";
import { BASE, loadError, withFixture, writeConfig } from "./_fixture.ts";

/** The stage `BASE` resolves to in `dir`: every default spelled out, derived ones (grpo's) too. */
function baseStage(dir: string): StageConfig {
  return {
    stageName: "main",
    mode: "both",
    project: "rft",
    name: "run",
    checkpointRootDir: resolve(Deno.cwd(), "runs"),
    pluginDirs: [],
    group: "",
    continueFromCheckpoint: true,
    seed: 42,
    model: {
      modelPath: `${dir}/model`,
      fromScratch: false,
      maxPromptTokens: 512,
      maxResponseTokens: 128,
      minResponseTokens: 0,
      temperature: 1,
      topP: 1,
      topK: 0,
      chatTemplateKwargs: {},
      loraConfigs: [],
    },
    algorithm: {
      algorithmType: "grpo",
      repeatTimes: 2,
      sampleStrategy: "default",
      sampleStrategyArgs: {},
      advantageFn: "grpo",
      advantageFnArgs: {},
      policyLossFn: "ppo",
      policyLossFnArgs: {},
      klPenaltyFn: "none",
      klPenaltyFnArgs: {},
      klLossFn: "k2",
      klLossFnArgs: {},
      entropyLossFn: "default",
      entropyLossFnArgs: {},
      dynamicSampling: { enable: false, maxNumGenBatches: 10 },
      optimizer: {
        lr: 1e-6,
        betas: [0.9, 0.999],
        eps: 1e-8,
        weightDecay: 0.01,
        lrWarmupSteps: 0,
        warmupStyle: "constant",
        minLrRatio: 0,
        gradClip: 1,
        momentsDtype: "float32",
      },
    },
    buffer: {
      batchSize: 8,
      trainBatchSize: 16,
      totalEpochs: 1,
      explorerInput: {
        taskset: {
          name: "train",
          path: `${dir}/data/train.jsonl`,
          split: "train",
          repeatTimes: 2,
          selector: "sequential",
          seed: 42,
          featureKeys: [],
          selectorArgs: {},
          format: { promptKey: "prompt" },
          rolloutArgs: { n: 2 },
          workflowArgs: {},
          defaultWorkflowType: "math_workflow",
          rewardFnArgs: {},
        },
        tasksets: [],
        evalTasksets: [],
        defaultWorkflowType: "math_workflow",
      },
      trainerInput: { experienceBuffer: { capacity: 4 * 16 } },
    },
    explorer: {
      runnerNum: 4,
      maxTimeout: 1800,
      maxRetryTimes: 2,
      evalInterval: 0,
      evalOnStartup: false,
      auxiliaryModels: [],
      rolloutModel: {
        enableOpenaiApi: false,
        openaiApiHost: "127.0.0.1",
        openaiApiPort: 0,
        enableAutoToolChoice: true,
        dtype: "auto",
      },
    },
    synchronizer: { syncInterval: 1, syncOffset: 0, syncStyle: "fixed" },
    cluster: { backend: "none", url: "nats://127.0.0.1:4222", ackWait: 60, weightDtype: "f32" },
    trainer: {
      saveInterval: 0,
      ppoEpochs: 1,
      packSequences: false,
      criticLr: 1e-6,
      cliprangeValue: 0.5,
    },
    monitor: { tensorboard: true, console: true, monitors: [] },
    dataProcessor: { experiencePipeline: { operators: [] } },
  };
}

Deno.test('loadConfig: a minimal config gets every default as one stage "main"', async () => {
  await withFixture(async (dir) => {
    const file = await writeConfig(dir, BASE);
    const config = await loadConfig(file, { env: {} });
    assertEquals(config.file, file);
    assertEquals(config.stages, [baseStage(dir)]);
  });
});

Deno.test("loadConfig: relative paths resolve against the config's directory, not the cwd", async () => {
  await withFixture(async (dir) => {
    await Deno.mkdir(`${dir}/conf`);
    const file = await writeConfig(
      dir,
      `model:\n  model_path: ../model\ncheckpoint_root_dir: ../out\nbuffer:\n  explorer_input:\n` +
        `    taskset:\n      path: ${dir}/data/train.jsonl\n`,
      "conf/run.yaml",
    );
    const [stage] = (await loadConfig(file, { env: {} })).stages;
    assertEquals(stage.model.modelPath, `${dir}/model`);
    assertEquals(stage.checkpointRootDir, `${dir}/out`);
    assertEquals(stage.buffer.explorerInput.taskset?.path, `${dir}/data/train.jsonl`);
  });
});

Deno.test("loadConfig: taskset keys win over explorer_input's; eval tasksets get defaults", async () => {
  await withFixture(async (dir) => {
    const file = await writeConfig(
      dir,
      `${BASE}      default_workflow_type: countdown
      reward_fn_args: {enable_overlong_penalty: true, cache_length: 4}
    default_workflow_type: math_boxed
    default_reward_fn_type: accuracy
    eval_tasksets:
      - path: data/eval.jsonl
        selector: shuffle
      - path: data/sft.jsonl
        name: held_out
        seed: 7
`,
    );
    const [stage] = (await loadConfig(file, { env: {} })).stages;
    const input = stage.buffer.explorerInput;
    assertEquals(input.taskset?.defaultWorkflowType, "countdown");
    assertEquals(input.taskset?.defaultRewardFnType, "accuracy");
    assertEquals(input.taskset?.rewardFnArgs, { enable_overlong_penalty: true, cache_length: 4 });
    assertEquals(input.evalTasksets[0].rewardFnArgs, {});
    assertEquals(
      input.evalTasksets.map((t) => [t.name, t.selector, t.seed, t.defaultWorkflowType]),
      [["eval", "shuffle", 42, "math_boxed"], ["held_out", "sequential", 7, "math_boxed"]],
    );
    assertEquals(stage.explorer.evalOnStartup, true);
  });
});

Deno.test("loadConfig: ${VAR} and ${VAR:default} are replaced; a whole reference can be a number", async () => {
  await withFixture(async (dir) => {
    const file = await writeConfig(
      dir,
      `model:
  model_path: \${MODEL_DIR}
  from_scratch: \${SCRATCH:true}
buffer:
  explorer_input:
    taskset:
      path: data/\${DATA:train}.jsonl
project: \${PROJECT}
name: run-\${RUN:7}-\${USER_NAME:anon}
seed: \${SEED:3}
algorithm:
  optimizer:
    lr: \${LR:1e-5}
  policy_loss_fn_args:
    clip_range_high: \${CLIP:0.28}
    loss_agg_mode: "\${MODE:token-mean}"
    label: $\${literal}
`,
    );
    const env = { PROJECT: "countdown", USER_NAME: "ada", LR: "2e-5", MODEL_DIR: `${dir}/model` };
    const [stage] = (await loadConfig(file, { env })).stages;
    assertEquals(stage.project, "countdown");
    assertEquals(stage.name, "run-7-ada");
    assertEquals(stage.seed, 3);
    assertEquals(stage.algorithm.optimizer.lr, 2e-5);
    assertEquals(stage.algorithm.policyLossFnArgs, {
      clip_range_high: 0.28,
      loss_agg_mode: "token-mean",
      label: "${literal}",
    });
    assertEquals(stage.model.modelPath, `${dir}/model`);
    assertEquals(stage.model.fromScratch, true);
    assertEquals(stage.buffer.explorerInput.taskset?.path, `${dir}/data/train.jsonl`);
  });
});

Deno.test("loadConfig: a quoted whole reference stays a string", async () => {
  await withFixture(async (dir) => {
    const message = await loadError(dir, `${BASE}seed: "\${SEED:3}"\n`);
    assertEquals(message, `${dir}/config.yaml:7: seed: expected an integer, found "3"`);
  });
});

Deno.test("loadConfig: --set overrides nested keys, numbers, booleans, lists and args", async () => {
  await withFixture(async (dir) => {
    const file = await writeConfig(dir, `${BASE}algorithm:\n  optimizer:\n    lr: 1e-5\n`);
    const config = await loadConfig(file, {
      env: {},
      overrides: [
        "algorithm.optimizer.lr=3e-6",
        "buffer.batch_size=16",
        "monitor.tensorboard=false",
        "algorithm.optimizer.betas=[0.9, 0.95]",
        "algorithm.policy_loss_fn_args.clip_range_high=0.3",
        "buffer.explorer_input.taskset.selector=shuffle",
        "name=exp 1",
        "buffer.batch_size=32",
      ],
    });
    const [stage] = config.stages;
    assertEquals(stage.algorithm.optimizer.lr, 3e-6);
    assertEquals(stage.algorithm.optimizer.betas, [0.9, 0.95]);
    assertEquals(stage.algorithm.policyLossFnArgs, { clip_range_high: 0.3 });
    assertEquals(stage.buffer.batchSize, 32);
    assertEquals(stage.monitor.tensorboard, false);
    assertEquals(stage.buffer.explorerInput.taskset?.selector, "shuffle");
    assertEquals(stage.name, "exp 1");
  });
});

Deno.test("loadConfig: --set with a bad path or value names the override", async () => {
  await withFixture(async (dir) => {
    assertEquals(
      await loadError(dir, BASE, { overrides: ["buffer.bath_size=4"] }),
      `--set buffer.bath_size=4: buffer.bath_size: unknown key "bath_size"; known: batch_size, ` +
        `train_batch_size, total_epochs, total_steps, explorer_input, trainer_input. ` +
        `Did you mean "batch_size"?`,
    );
    assertEquals(
      await loadError(dir, BASE, { overrides: ["buffer.batch_size=0"] }),
      `--set buffer.batch_size=0: buffer.batch_size: expected an integer >= 1, found 0`,
    );
    assertEquals(
      await loadError(dir, BASE, { overrides: ["seed"] }),
      `--set seed: expected key.path=value, found no valid key path before "="`,
    );
    assertEquals(
      await loadError(dir, BASE, { overrides: ["stages[0].mode=train"] }),
      `--set stages[0].mode=train: stages[0]: expected an index below 0, found 0`,
    );
    assertEquals(
      await loadError(dir, BASE, { overrides: ["seed.x=1"] }),
      `--set seed.x=1: seed.x: expected no key here, found "x" under a value`,
    );
  });
});

Deno.test("loadConfig: stages deep-merge over the top level, lists replaced", async () => {
  await withFixture(async (dir) => {
    const file = await writeConfig(
      dir,
      `${BASE}algorithm:
  optimizer:
    lr: 1e-5
    betas: [0.9, 0.95]
  policy_loss_fn_args:
    clip_range_low: 0.2
stages:
  - stage_name: warmup
    mode: train
    algorithm:
      algorithm_type: sft
      optimizer:
        lr: 1e-4
    buffer:
      explorer_input:
        taskset: null
      trainer_input:
        sft_warmup_dataset:
          path: data/sft.jsonl
  - stage_name: rl
    algorithm:
      repeat_times: 4
      optimizer:
        betas: [0.8, 0.9]
      policy_loss_fn_args:
        clip_range_high: 0.28
`,
    );
    const config = await loadConfig(file, { env: {}, overrides: ["stages[1].seed=5"] });
    const [warmup, rl] = config.stages;
    assertEquals(config.stages.map((s) => s.stageName), ["warmup", "rl"]);
    assertEquals([warmup.mode, rl.mode], ["train", "both"]);
    assertEquals(warmup.algorithm.algorithmType, "sft");
    assertEquals(warmup.algorithm.optimizer.lr, 1e-4);
    assertEquals(warmup.algorithm.optimizer.betas, [0.9, 0.95]);
    assertEquals(warmup.buffer.explorerInput.taskset, undefined);
    assertEquals(warmup.buffer.trainerInput.sftWarmupDataset, {
      path: `${dir}/data/sft.jsonl`,
      split: "train",
      format: {
        promptType: "plaintext",
        promptKey: "prompt",
        responseKey: "response",
        toolsKey: "tools",
      },
    });
    assertEquals(rl.algorithm.algorithmType, "grpo");
    assertEquals(rl.algorithm.repeatTimes, 4);
    assertEquals(rl.algorithm.optimizer.lr, 1e-5);
    assertEquals(rl.algorithm.optimizer.betas, [0.8, 0.9]);
    assertEquals(rl.algorithm.policyLossFnArgs, { clip_range_low: 0.2, clip_range_high: 0.28 });
    assertEquals([warmup.seed, rl.seed], [42, 5]);
    assertEquals(rl.buffer.explorerInput.taskset?.seed, 5);
  });
});

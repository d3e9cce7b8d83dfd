/**
 * Trinity-RFT configs on rft's loader: OmegaConf interpolation (`${oc.env:...}`, key
 * references, resolved after `--set`), Trinity keys mapped or ignored (one list), typos still
 * errors, SFT data in `trainer_input.experience_buffer`, and the Trinity key table's coverage.
 */

import { loadConfig } from "../../src/config/load_config.ts";
import { runDirectory } from "../../src/run/run.ts";
import { trinityKeyStatuses } from "../../src/config/trinity_status.ts";
import { TRINITY_KEYS } from "../../src/config/trinity_keys.ts";
import { assertEquals } from "../_asserts.ts";
import { BASE, loadError, withFixture, writeConfig } from "./_fixture.ts";

Deno.test("loadConfig: ${oc.env:NAME,default} with paths, empty and quoted defaults, and key references", async () => {
  await withFixture(async (dir) => {
    const file = await writeConfig(
      dir,
      `model:
  model_path: \${oc.env:MODEL_DIR,/nowhere}
  max_response_tokens: \${oc.env:RESPONSE,16}
checkpoint_root_dir: \${oc.env:CKPT,./checkpoints/run a}
project: "\${oc.env:EMPTY,}"
name: \${oc.env:NAME, 'quoted-name'}
buffer:
  explorer_input:
    taskset:
      path: \${oc.env:DATA,data/train.jsonl}
      name: \${.path}-set
    eval_tasksets:
    - path: \${buffer.explorer_input.taskset.path}
      name: held-\${model.max_response_tokens}
`,
    );
    const env = { MODEL_DIR: `${dir}/model` };
    const [stage] = (await loadConfig(file, { env })).stages;
    assertEquals(stage.model.modelPath, `${dir}/model`);
    assertEquals(stage.model.maxResponseTokens, 16);
    assertEquals(stage.checkpointRootDir, `${dir}/checkpoints/run a`);
    assertEquals(stage.project, "");
    assertEquals(stage.name, "quoted-name");
    assertEquals(stage.buffer.explorerInput.taskset?.name, "data/train.jsonl-set");
    assertEquals(stage.buffer.explorerInput.evalTasksets[0].path, `${dir}/data/train.jsonl`);
    assertEquals(stage.buffer.explorerInput.evalTasksets[0].name, "held-16");
  });
});

Deno.test("loadConfig: --set replaces a reference before it is resolved; an unset one names file:line", async () => {
  await withFixture(async (dir) => {
    const text = `model:\n  model_path: \${oc.env:TRINITY_MODEL_PATH}\n` +
      BASE.split("\n").slice(2).join("\n");
    const file = await writeConfig(dir, text);
    const [stage] = (await loadConfig(file, {
      env: {},
      overrides: [`model.model_path=${dir}/model`],
    })).stages;
    assertEquals(stage.model.modelPath, `${dir}/model`);
    const F = (message: string) => message.replace(`${dir}/config.yaml`, "F");
    assertEquals(
      F(await loadError(dir, text, { env: {} })),
      `F:2: model.model_path: expected environment variable TRINITY_MODEL_PATH to be set, found ` +
        `it unset (write \${oc.env:TRINITY_MODEL_PATH,default} to give a default)`,
    );
    assertEquals(
      F(await loadError(dir, `${BASE}name: \${model.nope}\n`)),
      `F:7: name: expected \${model.nope} to name a key of this config, found no such key`,
    );
    assertEquals(
      F(await loadError(dir, `${BASE}name: \${project}\nproject: \${name}\n`)),
      `F:7: name: expected references without a cycle, found one through name`,
    );
  });
});

/** A GSM8K-style Trinity config over the fixture's files (lines 1-35). */
const TRINITY = `project: p
name: n
model:
  model_path: model
  max_response_tokens: 64
  max_model_len: 320
cluster:
  node_num: 1
  gpu_per_node: 8
buffer:
  batch_size: 4
  explorer_input:
    taskset:
      storage_type: file
      path: data/train.jsonl
      rollout_args:
        logprobs: 0
  trainer_input:
    experience_buffer:
      name: buffer
      storage_type: queue
      path: 'sqlite:///gsm8k.db'
explorer:
  runner_per_model: 3
  rollout_model:
    engine_num: 2
    tensor_parallel_size: 1
synchronizer:
  sync_method: 'nccl'
  sync_timeout: 1200
trainer:
  trainer_type: 'verl'
  grad_clip: 0.5
  use_dynamic_bsz: true
  max_checkpoints_to_keep: 0
`;

Deno.test("loadConfig: Trinity keys are mapped onto rft's or listed once as ignored", async () => {
  await withFixture(async (dir) => {
    const config = await loadConfig(await writeConfig(dir, TRINITY));
    const [stage] = config.stages;
    assertEquals(stage.model.maxPromptTokens, 320 - 64);
    assertEquals(stage.algorithm.optimizer.gradClip, 0.5);
    assertEquals(stage.explorer.runnerNum, 3);
    assertEquals(stage.trainer.maxCheckpointsToKeep, undefined);
    assertEquals(stage.buffer.trainerInput.experienceBuffer.path, undefined);
    assertEquals(config.ignoredTrinityKeys, [
      "cluster.node_num",
      "cluster.gpu_per_node",
      "buffer.trainer_input.experience_buffer.name",
      "explorer.rollout_model.engine_num",
      "explorer.rollout_model.tensor_parallel_size",
      "synchronizer.sync_timeout",
      "trainer.trainer_type",
      "trainer.use_dynamic_bsz",
    ]);
    assertEquals(config.notes, [
      `${dir}/config.yaml:22: buffer.trainer_input.experience_buffer.path "sqlite:///gsm8k.db": ` +
      "rft keeps experiences in <run>/experiences/ instead",
    ]);
    // A Trinity key can be overridden too.
    const [small] = (await loadConfig(`${dir}/config.yaml`, {
      overrides: ["model.max_model_len=100", "cluster.gpu_per_node=1"],
    })).stages;
    assertEquals(small.model.maxPromptTokens, 36);
  });
});

Deno.test("loadConfig: Trinity values rft cannot honour and typos are one-line errors", async () => {
  await withFixture(async (dir) => {
    const cases: [string, string, string][] = [
      [
        "  sync_method: 'nccl'",
        "  sync_method: 'ncl'",
        'F:29: synchronizer.sync_method: expected one of nccl, checkpoint, memory, found "ncl"',
      ],
      [
        "      storage_type: file",
        "      storage_type: sql",
        'F:14: buffer.explorer_input.taskset.storage_type: expected file with path "data/train.jsonl" (sql reads an sqlite:/// path, file a file or directory), found "sql"',
      ],
      [
        "      storage_type: file",
        "      storage_type: queue",
        'F:14: buffer.explorer_input.taskset.storage_type: expected file or sql, found "queue": a taskset queue is filled by another process (Trinity\'s data processor), which rft does not run',
      ],
      [
        "      path: data/train.jsonl",
        "      path: sqlite:///data/train.jsonl",
        'F:14: buffer.explorer_input.taskset.storage_type: expected sql with path "sqlite:///data/train.jsonl" (sql reads an sqlite:/// path, file a file or directory), found "file"',
      ],
      [
        "        logprobs: 0",
        "        logprobs: -1",
        "F:17: buffer.explorer_input.taskset.rollout_args.logprobs: expected an integer >= 0, found -1",
      ],
      [
        "  gpu_per_node: 8",
        "  gpu_per_nod: 8",
        // rft's own `cluster` keys are the section's known keys; Trinity's are dropped before.
        'F:9: cluster.gpu_per_nod: unknown key "gpu_per_nod"; known: backend, url, ack_wait, weight_dtype',
      ],
      ["  grad_clip: 0.5", "  grad_clipp: 0.5", "F:33: trainer.grad_clipp: unknown key"],
      [
        "  max_model_len: 320",
        "  max_model_len: 64",
        "F:6: model.max_model_len: expected an integer above model.max_response_tokens (64), found 64",
      ],
    ];
    for (const [line, bad, message] of cases) {
      const error = (await loadError(dir, TRINITY.replace(line, bad)))
        .replace(`${dir}/config.yaml`, "F");
      assertEquals(
        error.startsWith(message),
        true,
        `${error}\n  expected to start with\n${message}`,
      );
    }
  });
});

Deno.test("loadConfig: an sft stage reads Trinity's experience_buffer as its chat dataset", async () => {
  await withFixture(async (dir) => {
    await Deno.mkdir(`${dir}/mot/math`, { recursive: true });
    await Deno.writeTextFile(`${dir}/mot/math/train-00000-of-00001.jsonl`, "{}\n");
    const file = await writeConfig(
      dir,
      `${BASE}stages:
  - stage_name: sft_warmup
    mode: train
    algorithm:
      algorithm_type: sft
    buffer:
      trainer_input:
        experience_buffer:
          name: sft_warmup_dataset
          storage_type: file
          path: mot
          subset_name: math
  - stage_name: rft
`,
    );
    const [sft, rft] = (await loadConfig(file)).stages;
    const dataset = sft.buffer.trainerInput.sftWarmupDataset!;
    assertEquals(dataset.path, `${dir}/mot`);
    assertEquals(dataset.subsetName, "math");
    assertEquals(dataset.format.promptType, "messages");
    assertEquals(sft.buffer.trainerInput.experienceBuffer.path, undefined);
    assertEquals(rft.buffer.trainerInput.sftWarmupDataset, undefined);
  });
});

Deno.test("Trinity key table: every key of Trinity's schema is implemented, mapped or ignored", () => {
  const statuses = trinityKeyStatuses();
  assertEquals(statuses.length, TRINITY_KEYS.size);
  assertEquals(statuses.length > 400, true, `${statuses.length} keys`);
  const missing = statuses.filter(([, s]) => s.status === "missing").map(([path]) => path);
  assertEquals(missing, []);
  const status = new Map(statuses.map(([path, s]) => [path, s.status]));
  for (
    const [path, expected] of [
      ["model.max_model_len", "mapped"],
      ["trainer.grad_clip", "mapped"],
      ["explorer.runner_per_model", "mapped"],
      ["synchronizer.sync_method", "mapped"],
      ["buffer.explorer_input.taskset.subset_name", "implemented"],
      ["buffer.explorer_input.taskset.rollout_args.logprobs", "mapped"],
      ["explorer.rollout_model.enforce_eager", "ignored"],
      ["trainer.ulysses_sequence_parallel_size", "ignored"],
      ["cluster.gpu_per_node", "ignored"],
    ]
  ) assertEquals(status.get(path), expected, path);
});

Deno.test("loadConfig: verl's enable_gradient_checkpointing is read as trainer.gradient_checkpointing", async () => {
  await withFixture(async (dir) => {
    const verl = (flag: string) =>
      `${BASE}trainer:\n  trainer_config:\n    actor_rollout_ref:\n      model:\n` +
      `        enable_gradient_checkpointing: ${flag}\n        use_remove_padding: true\n`;
    for (const flag of [true, false]) {
      const config = await loadConfig(await writeConfig(dir, verl(String(flag))));
      assertEquals(config.stages[0].trainer.gradientCheckpointing, flag);
      assertEquals(config.ignoredTrinityKeys.includes("trainer.trainer_config"), true);
    }
    const [plain] = (await loadConfig(await writeConfig(dir, BASE))).stages;
    assertEquals(plain.trainer.gradientCheckpointing, undefined, "auto when unset");
  });
});

Deno.test("loadConfig: the model section of Trinity's config guide as written (None, ${model.model_path}, oc.decode)", async () => {
  await withFixture(async (dir) => {
    // trinity_configs.md's model section (v0.5.2), with FACTOR as trinity_gpu_configs.md sets it.
    const model = `model:
  model_path: \${oc.env:MODEL_PATH}  # MODEL_PATH is an environment variable set in advance
  critic_model_path: \${model.model_path}  # use the value of model.model_path
  custom_chat_template: None
  chat_template_path: None
  max_model_len: 20480
  max_prompt_tokens: 4096
  max_response_tokens: 16384
  min_response_tokens: 1
  enable_prompt_truncation: true
  repetition_penalty: 1.0
  lora_configs: null
  rope_scaling:
    rope_type: yarn
    factor: \${oc.decode:\${oc.env:FACTOR}}
  rope_theta: null
`;
    const text = TRINITY.replace(/^model:\n(?: {2}.*\n)+/m, model);
    const env = { MODEL_PATH: `${dir}/model`, FACTOR: "1.5" };
    const [stage] = (await loadConfig(await writeConfig(dir, text), { env })).stages;
    assertEquals(stage.model.modelPath, `${dir}/model`);
    assertEquals(stage.model.minResponseTokens, 1);
    assertEquals([stage.model.maxPromptTokens, stage.model.maxResponseTokens], [4096, 16384]);
    // A critic from another model, and a chat template of one's own, are refused in one line.
    const F = (message: string) => message.replace(`${dir}/config.yaml`, "F");
    const other = text.replace("${model.model_path}  #", `${dir}/other  #`);
    assertEquals(
      F(await loadError(dir, other, { env })),
      `F:5: model.critic_model_path: expected "" (rft's critic starts from the policy's ` +
        `model_path), found "${dir}/other"`,
    );
  });
});

Deno.test("loadConfig: keys of Trinity's newest config guide (colocate, fully_async, optimizer fused/foreach)", async () => {
  await withFixture(async (dir) => {
    const text = TRINITY.replace("project: p\n", "project: p\nmode: colocate\n") +
      "synchronizer:\n  sync_style: fully_async\n" +
      "algorithm:\n  optimizer:\n    lr: 1e-6\n    fused: true\n    foreach: false\n";
    const config = await loadConfig(
      await writeConfig(
        dir,
        text.replace(/^synchronizer:\n(?: {2}sync_method.*\n {2}sync_timeout.*\n)/m, ""),
      ),
    );
    const [stage] = config.stages;
    assertEquals([stage.mode, stage.synchronizer.syncStyle], ["both", "trainer_driven"]);
    assertEquals(
      ["algorithm.optimizer.fused", "algorithm.optimizer.foreach"].every((k) =>
        config.ignoredTrinityKeys.includes(k)
      ),
      true,
    );
  });
});

Deno.test("loadConfig: Trinity's group is a level of the run directory, as in Trinity", async () => {
  await withFixture(async (dir) => {
    const [grouped] = (await loadConfig(
      await writeConfig(dir, TRINITY.replace("project: p\n", "project: p\ngroup: g\n")),
    )).stages;
    assertEquals(grouped.group, "g");
    assertEquals(runDirectory(grouped), `${grouped.checkpointRootDir}/p/g/n`);
    const [plain] = (await loadConfig(await writeConfig(dir, TRINITY))).stages;
    assertEquals(runDirectory(plain), `${plain.checkpointRootDir}/p/n`);
  });
});

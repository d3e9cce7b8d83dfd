import { ALGORITHM_TYPE } from "../../src/algorithm/algorithm_type.ts";
import { ConfigError } from "../../src/config/config_error.ts";
import { loadConfig, type LoadConfigOptions } from "../../src/config/load_config.ts";
import { assertEquals, assertRejects } from "../_asserts.ts";
import { BASE, loadError, withFixture } from "./_fixture.ts";

/** A config that must not load: its text and the exact message (`F` = file, `D` = its dir). */
interface BadConfig {
  name: string;
  yaml: string;
  message: string;
  options?: LoadConfigOptions;
}

const TOP_KEYS =
  "mode, project, group, name, checkpoint_root_dir, plugin_dirs, continue_from_checkpoint, seed, model, " +
  "algorithm, buffer, explorer, synchronizer, cluster, trainer, monitor, data_processor";
const TASKSET_KEYS =
  "name, path, split, repeat_times, subset_name, selector, seed, feature_keys, selector_args, " +
  "weight, lesson, format, rollout_args, " +
  "workflow_args, default_workflow_type, default_reward_fn_type, reward_fn_args";
const STAGES = `stages:
  - stage_name: sft
    mode: train
    algorithm:
      algorithm_type: sft
    buffer:
      trainer_input:
        sft_warmup_dataset:
          path: data/sft.jsonl
`;

const CASES: BadConfig[] = [
  {
    name: "unknown top-level key, with a did-you-mean",
    yaml: `${BASE}seeed: 1\n`,
    message: `F:7: seeed: unknown key "seeed"; known: ${TOP_KEYS}, stages. Did you mean "seed"?`,
  },
  {
    name: "unknown nested key",
    yaml: `${BASE}  bath_size: 4\n`,
    message:
      `F:7: buffer.bath_size: unknown key "bath_size"; known: batch_size, train_batch_size, ` +
      `total_epochs, total_steps, explorer_input, trainer_input. Did you mean "batch_size"?`,
  },
  {
    name: "unknown key deep inside a taskset",
    yaml: `${BASE}      fromat:\n        prompt_key: q\n`,
    message:
      `F:7: buffer.explorer_input.taskset.fromat: unknown key "fromat"; known: ${TASKSET_KEYS}. ` +
      `Did you mean "format"?`,
  },
  {
    name: "a string for an integer",
    yaml: `${BASE}  batch_size: eight\n`,
    message: `F:7: buffer.batch_size: expected an integer >= 1, found "eight"`,
  },
  {
    name: "a fraction for an integer",
    yaml: `${BASE}  batch_size: 2.5\n`,
    message: `F:7: buffer.batch_size: expected an integer >= 1, found 2.5`,
  },
  {
    name: "a negative learning rate",
    yaml: `${BASE}algorithm:\n  optimizer:\n    lr: -1e-5\n`,
    message: `F:9: algorithm.optimizer.lr: expected a number > 0, found -0.00001`,
  },
  {
    name: "a negative sync_offset",
    yaml: `${BASE}synchronizer:\n  sync_offset: -1\n`,
    message: `F:8: synchronizer.sync_offset: expected an integer >= 0, found -1`,
  },
  {
    name: "betas of the wrong length",
    yaml: `${BASE}algorithm:\n  optimizer:\n    betas: [0.9]\n`,
    message: `F:9: algorithm.optimizer.betas: expected a list of 2, found a list of 1`,
  },
  {
    name: "a bad mode, with a did-you-mean",
    yaml: `${BASE}mode: trian\n`,
    message:
      `F:7: mode: expected a known value, found "trian"; known: both, explore, train, bench. ` +
      `Did you mean "train"?`,
  },
  {
    name: "an unknown algorithm_type lists the known ones",
    yaml: `${BASE}algorithm:\n  algorithm_type: grp\n`,
    message: `F:8: algorithm.algorithm_type: expected a known value, found "grp"; known: ${
      ALGORITHM_TYPE.names().join(", ")
    }. Did you mean "grpo"?`,
  },
  {
    name: "a selector not in the list",
    yaml: `${BASE}      selector: random_walk\n`,
    message: `F:7: buffer.explorer_input.taskset.selector: expected a known value, found ` +
      `"random_walk"; known: difficulty_based, offline_easy2hard, random, sequential, shuffle`,
  },
  {
    name: "a missing model_path",
    yaml: `model:\n  from_scratch: true\n${BASE.slice(BASE.indexOf("buffer:"))}`,
    message: `F:1: model.model_path: expected a model directory with a config.json, found nothing`,
  },
  {
    name: "a model_path without config.json",
    yaml: BASE.replace("model_path: model", "model_path: empty_model"),
    message: `F:2: model.model_path: expected a model directory with a config.json, found ` +
      `"D/empty_model" (no config.json in it)`,
  },
  {
    name: "a model_path that does not exist",
    yaml: BASE.replace("model_path: model", "model_path: ./nowhere"),
    message: `F:2: model.model_path: expected a model directory with a config.json, found ` +
      `neither "${Deno.cwd()}/nowhere" nor "D/nowhere" nor a Hub cache copy (no such file or ` +
      `directory)`,
  },
  {
    name: "a taskset path that does not exist",
    yaml: BASE.replace("train.jsonl", "nope.jsonl"),
    message:
      `F:6: buffer.explorer_input.taskset.path: expected a dataset file or directory (or a Hub id in the local Hub cache), ` +
      `found neither "${Deno.cwd()}/data/nope.jsonl" nor "D/data/nope.jsonl" nor a Hub cache ` +
      `copy (no such file or directory)`,
  },
  {
    name: "a taskset without its required path",
    yaml: BASE.replace("path: data/train.jsonl", "selector: shuffle"),
    message:
      `F:5: buffer.explorer_input.taskset.path: expected a dataset file or directory (or a Hub id in the local Hub cache), ` +
      `found nothing`,
  },
  {
    name: "a missing taskset when the run explores",
    yaml: `model:\n  model_path: model\n`,
    message: `F:1: buffer.explorer_input.taskset: expected a taskset section (mode "both" ` +
      `explores it), found nothing`,
  },
  {
    name: "an sft stage without a dataset",
    yaml: `${BASE}algorithm:\n  algorithm_type: sft\n`,
    message: `F:3: buffer.trainer_input.sft_warmup_dataset: expected a dataset section ` +
      `(algorithm_type "sft" trains on it), found nothing`,
  },
  {
    name: "a scalar where a section belongs",
    yaml: `${BASE}trainer: fast\n`,
    message: `F:7: trainer: expected a mapping, found "fast"`,
  },
  {
    name: "invalid YAML syntax",
    yaml: `${BASE}mode: train: fast\nseed: 1\n`,
    message:
      `F:7: expected valid YAML, found an error: Nested mappings are not allowed in compact ` +
      `mappings`,
  },
  {
    name: "a duplicate key",
    yaml: `${BASE}seed: 1\nseed: 2\n`,
    message: `F:8: expected valid YAML, found an error: Map keys must be unique`,
  },
  {
    name: "a root that is not a mapping",
    yaml: `- model\n- buffer\n`,
    message: `F:1: config: expected a mapping, found a list`,
  },
  {
    name: "an unset environment variable without a default",
    yaml: `${BASE}name: \${RUN_NAME}\n`,
    message: `F:7: name: expected environment variable RUN_NAME to be set, found it unset ` +
      `(write \${oc.env:RUN_NAME,default} to give a default)`,
  },
  {
    name: "a malformed environment reference",
    yaml: `${BASE}name: run-\${1X}\n`,
    message: `F:7: name: expected \${oc.env:NAME}, \${oc.env:NAME,default} or \${key.path}, ` +
      `found "\${1X}"`,
  },
  {
    name: "duplicate stage names",
    yaml: `${BASE}${STAGES}  - stage_name: sft\n`,
    message: `F:16: stages[1].stage_name: expected a unique stage name, found "sft" again ` +
      `(first at stages[0].stage_name)`,
  },
  {
    name: "a stage without a name",
    yaml: `${BASE}${STAGES}  - mode: explore\n`,
    message: `F:16: stages[1].stage_name: expected a non-empty string, found nothing`,
  },
  {
    name: "an unknown key inside a stage",
    yaml: `${BASE}${STAGES}  - stage_name: rl\n    algorithm:\n      algorithm_typ: grpo\n`,
    message: `F:18: stages[1].algorithm.algorithm_typ: unknown key "algorithm_typ"; known: ` +
      `algorithm_type, repeat_times, sample_strategy, sample_strategy_args, advantage_fn, ` +
      `advantage_fn_args, policy_loss_fn, policy_loss_fn_args, kl_penalty_fn, kl_penalty_fn_args, ` +
      `kl_loss_fn, kl_loss_fn_args, entropy_loss_fn, entropy_loss_fn_args, dynamic_sampling, optimizer. ` +
      `Did you mean "algorithm_type"?`,
  },
  {
    name: "a bad value inside a stage",
    yaml: `${BASE}${STAGES}  - stage_name: rl\n    buffer:\n      batch_size: 0\n`,
    message: `F:18: stages[1].buffer.batch_size: expected an integer >= 1, found 0`,
  },
  {
    name: "a bad top-level value inherited by a stage",
    yaml: `${BASE}seed: 1.5\n${STAGES}`,
    message: `F:7: seed: expected an integer, found 1.5`,
  },
  {
    name: "an empty stages list",
    yaml: `${BASE}stages: []\n`,
    message: `F:7: stages: expected at least one stage, found an empty list`,
  },
  {
    name: "eval tasksets with the same name",
    yaml:
      `${BASE}    eval_tasksets:\n      - path: data/eval.jsonl\n      - path: data/eval.jsonl\n`,
    message: `F:9: buffer.explorer_input.eval_tasksets[1]: expected eval tasksets with unique ` +
      `names, found "eval" twice (set name)`,
  },
];

for (const bad of CASES) {
  Deno.test(`loadConfig rejects ${bad.name}`, async () => {
    await withFixture(async (dir) => {
      const message = await loadError(dir, bad.yaml, bad.options);
      assertEquals(
        message,
        bad.message.replace(/^F:/, `${dir}/config.yaml:`).replaceAll("D/", `${dir}/`),
      );
      assertEquals(message.includes("\n"), false);
    });
  });
}

Deno.test("loadConfig rejects a missing file, naming it", async () => {
  await withFixture(async (dir) => {
    await assertRejects(
      () => loadConfig(`${dir}/nope.yaml`),
      ConfigError,
      `${dir}/nope.yaml: expected a readable YAML config file, found no such file`,
    );
  });
});

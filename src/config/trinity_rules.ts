/**
 * What rft does with each key of Trinity-RFT's schema that its own schema lacks: `MAPPED` keys
 * have a rule that moves the value onto rft's keys or checks it; `IGNORED` keys (Ray, vLLM,
 * verl, NCCL, cluster settings, with no meaning in one process) are dropped with a reason. The
 * rules run in `trinity_compat.ts`; keys listed nowhere here stay errors.
 */

import { ConfigError } from "./config_error.ts";
import { type ConfigNode, describeNode } from "./config_tree.ts";
import { TRINITY_KEYS } from "./trinity_keys.ts";

/** A mapping node. */
export type MapNode = ConfigNode & { kind: "map" };

/** What a rule sees: the key's node, the mapping holding it, and the stage (or top) root. */
export interface RuleContext {
  /** The key, and its Trinity path (`[]` for list items). */
  key: string;
  path: string;
  node: ConfigNode;
  parent: MapNode;
  root: MapNode;
  /** Sets `path` (from the root) to `value` unless it is written already. */
  setIfAbsent(path: readonly string[], value: ConfigNode): void;
  /** Adds a warning line. */
  note(line: string): void;
  /** Lists `path` among the ignored keys. */
  ignore(path: string): void;
}

/** A Trinity key rft gives a meaning: its rule and, for the docs, what it does. */
export interface MappedKey {
  doc: string;
  apply(ctx: RuleContext): void;
}

/** Where tasksets are, in Trinity's key paths. */
const TASKSET_PATHS = ["buffer.explorer_input.taskset", "buffer.explorer_input.eval_tasksets[]"];

/** `{taskset}.key` rules for each taskset path. */
function forTasksets(rules: Record<string, MappedKey>): Record<string, MappedKey> {
  return Object.fromEntries(
    TASKSET_PATHS.flatMap((prefix) =>
      Object.entries(rules).map(([key, rule]) => [`${prefix}.${key}`, rule])
    ),
  );
}

/** A rule that moves the value to `to` (a path from the root) unless `to` is written. */
function moveTo(to: string, doc?: string): MappedKey {
  return {
    doc: doc ?? `Read as \`${to}\``,
    apply: ({ node, setIfAbsent }) => setIfAbsent(to.split("."), node),
  };
}

/** A rule moving the value to a sibling key `to` of the same section. */
function renameTo(to: string, doc?: string): MappedKey {
  return {
    doc: doc ?? `Read as \`${to}\` of the same section`,
    apply: ({ node, parent }) => {
      if (!parent.entries.has(to)) parent.entries.set(to, node);
    },
  };
}

/** A rule that checks the value is one of `values` and then drops it. */
function oneOfThenDrop(values: readonly string[], doc: string): MappedKey {
  return {
    doc,
    apply: ({ node }) => {
      const value = node.kind === "scalar" ? node.value : undefined;
      if (typeof value !== "string" || !values.includes(value)) {
        throw new ConfigError(
          node.origin.where,
          node.origin.path,
          `expected one of ${values.join(", ")}, found ${describeNode(node)}`,
        );
      }
    },
  };
}

/** A scalar node holding `value`, placed where `at` is. */
function scalarAt(at: ConfigNode, value: string | number | boolean): ConfigNode {
  return { kind: "scalar", value, plain: true, origin: at.origin };
}

/** The number at `node`, or a ConfigError. */
function numberAt(node: ConfigNode, what: string): number {
  if (node.kind === "scalar" && typeof node.value === "number") return node.value;
  throw new ConfigError(
    node.origin.where,
    node.origin.path,
    `expected ${what}, found ${describeNode(node)}`,
  );
}

/** A key rft cannot honour: accepted at Trinity's default `value` (no effect), else an error. */
function onlyDefault(value: string | number | boolean | null, why: string): MappedKey {
  return {
    doc: `Only ${JSON.stringify(value)} (Trinity's default): ${why}`,
    apply: ({ node }) => {
      const same = node.kind === "scalar" && node.value === value;
      if (!same) {
        throw new ConfigError(
          node.origin.where,
          node.origin.path,
          `expected ${JSON.stringify(value)} (${why}), found ${describeNode(node)}`,
        );
      }
    },
  };
}

/** A section rft cannot honour when enabled: accepted with `enable: false`, else an error. */
function onlyDisabled(why: string): MappedKey {
  return {
    doc: `Only with \`enable: false\`: ${why}`,
    apply: ({ node }) => {
      const enable = node.kind === "map" ? node.entries.get("enable") : undefined;
      if (enable && !(enable.kind === "scalar" && enable.value === false)) {
        throw new ConfigError(
          enable.origin.where,
          enable.origin.path,
          `expected false (${why}), found ${describeNode(enable)}`,
        );
      }
    },
  };
}

/** A key rft refuses whatever its value: an error saying why. */
function refused(why: string): MappedKey {
  return {
    doc: `Refused: ${why}`,
    apply: ({ node }) => {
      throw new ConfigError(
        node.origin.where,
        node.origin.path,
        `expected this Trinity key to be left out (${why}), found it set`,
      );
    },
  };
}

/** Trinity's "unset" value of a key rft implements (`-1`, `0`): the key is dropped. */
function unsetWhen(unset: number, doc: string): MappedKey {
  return {
    doc,
    apply: ({ key, node, parent }) => {
      if (!(node.kind === "scalar" && node.value === unset)) parent.entries.set(key, node);
    },
  };
}

/** A taskset's `data_selector` (or deprecated `task_selector`): read as its selector and seed. */
const SELECTOR_SECTION: MappedKey = {
  doc: "`selector_type` read as the taskset's `selector`, `seed` as its `seed`",
  apply: ({ node, parent, path, ignore }) => {
    if (node.kind !== "map") return;
    for (const [key, value] of node.entries) {
      const own = key === "selector_type" ? "selector" : key === "seed" ? "seed" : undefined;
      if (own === undefined) ignore(`${path}.${key}`);
      else if (!parent.entries.has(own)) parent.entries.set(own, value);
    }
  },
};

/** Trinity keys rft maps onto its own keys or checks, by Trinity key path. */
export const MAPPED: Readonly<Record<string, MappedKey>> = {
  "model.max_model_len": {
    doc:
      "`model.max_prompt_tokens` defaults to max_model_len - max_response_tokens (Trinity's rule)",
    apply: ({ node, root, setIfAbsent }) => {
      const total = numberAt(node, "an integer >= 2");
      const model = root.entries.get("model") as MapNode;
      const responseNode = model.entries.get("max_response_tokens");
      const response = responseNode ? numberAt(responseNode, "an integer") : 128;
      if (!Number.isInteger(total) || total - response < 1) {
        throw new ConfigError(
          node.origin.where,
          node.origin.path,
          `expected an integer above model.max_response_tokens (${response}), found ${total}`,
        );
      }
      setIfAbsent(["model", "max_prompt_tokens"], scalarAt(node, total - response));
    },
  },
  "model.top_k": unsetWhen(-1, "`-1` (Trinity's off) is rft's `0`"),
  "trainer.grad_clip": moveTo("algorithm.optimizer.grad_clip"),
  "trainer.total_steps": moveTo("buffer.total_steps"),
  "trainer.max_checkpoints_to_keep": unsetWhen(0, "`0` (Trinity's keep all) is rft's default"),
  "algorithm.optimizer.clip_grad": renameTo("grad_clip"),
  "algorithm.optimizer.lr_warmup_steps": unsetWhen(-1, "`-1` (Trinity's none) is rft's `0`"),
  "algorithm.optimizer.lr_scheduler_type": {
    doc: "`constant` / `cosine` / `linear` read as `warmup_style`",
    apply: (ctx) => {
      oneOfThenDrop(["constant", "cosine", "linear"], "").apply(ctx);
      if (!ctx.parent.entries.has("warmup_style")) ctx.parent.entries.set("warmup_style", ctx.node);
    },
  },
  "buffer.train_batch_size": unsetWhen(0, "`0` (Trinity's default) is batch_size * repeat_times"),
  "buffer.explorer_input.default_eval_workflow_type": {
    doc: "The workflow of every eval taskset that names none",
    apply: ({ node, parent }) => {
      const evals = parent.entries.get("eval_tasksets");
      for (const item of evals?.kind === "list" ? evals.items : []) {
        if (item.kind === "map" && !item.entries.has("default_workflow_type")) {
          item.entries.set("default_workflow_type", node);
        }
      }
    },
  },
  "buffer.trainer_input.experience_buffer.storage_type": oneOfThenDrop(
    ["queue", "file", "sql"],
    "Any of queue, file, sql: rft's experience buffer is in memory, persisted under " +
      "<run>/experiences/ (for sft / dpo stages the buffer is the dataset)",
  ),
  "buffer.trainer_input.experience_buffer.path": {
    doc: "An `sqlite:///` path is dropped with a warning: experiences persist in " +
      "<run>/experiences/; a file path is the dataset of an sft / dpo stage",
    apply: ({ node, parent, note }) => {
      if (node.kind === "scalar" && typeof node.value === "string") {
        if (/^sqlite:\/\//.test(node.value)) {
          note(
            `${node.origin.where}: ${node.origin.path} ${JSON.stringify(node.value)}: rft keeps ` +
              "experiences in <run>/experiences/ instead",
          );
          return;
        }
      }
      parent.entries.set("path", node);
    },
  },
  ...Object.fromEntries(
    ["split", "subset_name", "format"].map((key) => [
      `buffer.trainer_input.experience_buffer.${key}`,
      {
        doc: "The dataset of an sft / dpo stage: read as `sft_warmup_dataset`'s",
        apply: ({ node, parent }: RuleContext) => parent.entries.set(key, node),
      },
    ]),
  ),
  "explorer.runner_per_model": moveTo(
    "explorer.runner_num",
    "Read as `explorer.runner_num` (one rollout model)",
  ),
  "explorer.rollout_model.base_port": renameTo("openai_api_port"),
  "explorer.rollout_model.api_key": {
    doc: "Read as `openai_api_key`; `EMPTY` (Trinity's default) is no key",
    apply: ({ node, parent }) => {
      if (!(node.kind === "scalar" && node.value === "EMPTY")) {
        if (!parent.entries.has("openai_api_key")) parent.entries.set("openai_api_key", node);
      }
    },
  },
  "synchronizer.sync_method": oneOfThenDrop(
    ["nccl", "checkpoint", "memory"],
    "Any of nccl, checkpoint, memory: rft hands weights over in process",
  ),
  "monitor.monitor_type": {
    doc: "`tensorboard` sets `monitor.tensorboard`; another type turns it off",
    apply: ({ node, parent }) => {
      if (!parent.entries.has("tensorboard")) {
        parent.entries.set(
          "tensorboard",
          scalarAt(node, node.kind === "scalar" && node.value === "tensorboard"),
        );
      }
    },
  },
  "algorithm.loss_agg_mode": onlyDefault(null, "set policy_loss_fn_args.loss_agg_mode"),
  "algorithm.rollout_correction": onlyDefault(null, "rft has no rollout correction"),
  "data_processor.task_pipeline": refused("rft has no Data-Juicer task pipeline"),
  "data_processor.experience_pipeline.inputs": refused("rft has one experience stream"),
  "model.critic_model_path": onlyDefault("", "rft's critic starts from the policy"),
  "model.custom_chat_template": onlyDefault(null, "rft uses the model's chat template"),
  "model.chat_template_path": onlyDefault(null, "rft uses the model's chat template"),
  "model.min_response_tokens": onlyDefault(0, "rft stops at EOS"),
  "model.repetition_penalty": onlyDefault(1, "rft's sampler has no repetition penalty"),
  "model.enable_thinking": onlyDefault(null, "the model's chat template decides"),
  "model.lora_configs": refused("rft trains all weights, not LoRA adapters"),
  "model.tinker": onlyDisabled("rft trains locally, not on Tinker"),
  "model.external_model": onlyDisabled("rft's policy is the local model"),
  "buffer.explorer_input.tasksets": refused(
    "rft explores one taskset: buffer.explorer_input.taskset",
  ),
  "buffer.trainer_input.auxiliary_buffers": refused(
    "expert data of mix is buffer.trainer_input.sft_warmup_dataset",
  ),
  "buffer.trainer_input.experience_buffer.replay_buffer": {
    doc: "`enable: true` is rft's `replay` (decay from priority_fn_args, reuse_cooldown_time)",
    apply: ({ node, parent }) => {
      const get = (map: ConfigNode | undefined, key: string) =>
        map?.kind === "map" ? map.entries.get(key) : undefined;
      const enable = get(node, "enable");
      if (!(enable?.kind === "scalar" && enable.value === true) || parent.entries.has("replay")) {
        return;
      }
      const entries = new Map<string, ConfigNode>();
      const decay = get(get(node, "priority_fn_args"), "decay");
      if (decay) entries.set("decay", decay);
      const cooldown = get(node, "reuse_cooldown_time");
      if (cooldown?.kind === "scalar" && typeof cooldown.value === "number") {
        entries.set("reuse_cooldown_ms", scalarAt(cooldown, Math.round(cooldown.value * 1000)));
      }
      parent.entries.set("replay", { kind: "map", entries, origin: node.origin });
    },
  },
  "trainer.critic_warmup": onlyDefault(0, "rft trains the critic with the policy"),
  "synchronizer.explorer_sync_interval": onlyDefault(null, "use sync_interval"),
  "synchronizer.trainer_sync_interval": onlyDefault(null, "use sync_interval"),
  ...forTasksets({
    storage_type: oneOfThenDrop(["file"], "`file` only: rft reads tasksets from files"),
    "rollout_args.logprobs": {
      doc: "`0` only (the sampled token's logprob, which rft always records)",
      apply: ({ node }) => {
        if (!(node.kind === "scalar" && node.value === 0)) {
          throw new ConfigError(
            node.origin.where,
            node.origin.path,
            `expected 0 (rft records the sampled token's logprob only), found ${
              describeNode(node)
            }`,
          );
        }
      },
    },
    "rollout_args.top_k": unsetWhen(-1, "`-1` (Trinity's off) is rft's `0`"),
    data_selector: SELECTOR_SECTION,
    task_selector: SELECTOR_SECTION,
  }),
};

/** Trinity keys with no meaning in one process (and so no effect), with why. */
export const IGNORED: Readonly<Record<string, string>> = {
  group: "Run directory grouping of Ray namespaces",
  checkpoint_job_dir: "Set by Trinity itself",
  ray_namespace: "Ray",
  ignore_validator_suggestions: "GPU memory advisor",
  cluster: "Ray cluster layout",
  service: "External services (Data-Juicer server)",
  log: "Ray log routing (rft logs to stderr)",
  cod: "A research workflow's settings",
  "model.trust_remote_code": "rft runs no model code from the model directory",
  "model.logprobs": "rft always records the sampled token's logprob",
  "model.enable_prompt_truncation": "rft always cuts prompts from the left",
  "model.rope_theta": "Read from config.json",
  "model.rope_scaling": "Read from config.json",
  "buffer.max_retry_times": "SQL read retries; rft's buffers are in process",
  "buffer.max_retry_interval": "SQL read retries; rft's buffers are in process",
  "buffer.tokenizer_path": "Set by Trinity itself",
  "buffer.cache_dir": "Set by Trinity itself",
  "buffer.explorer_output": "Set by Trinity itself",
  "buffer.trainer_input.experience_buffer.name": "Names a Ray actor",
  "buffer.trainer_input.experience_buffer.data_selector": "Experiences are taken in arrival order",
  "data_processor.experience_pipeline.save_input": "rft persists experiences in <run>/experiences/",
  "data_processor.experience_pipeline.input_save_path":
    "rft persists experiences in <run>/experiences/",
  "data_processor.experience_pipeline.output": "Set by Trinity itself",
  "model.fully_sharded_loras": "LoRA serving in vLLM",
  "model.max_cpu_loras": "LoRA serving in vLLM",
  "buffer.trainer_input.experience_buffer.max_read_timeout": "Ray queue reads",
  "buffer.trainer_input.experience_buffer.max_retry_times": "SQL read retries",
  "buffer.trainer_input.experience_buffer.max_retry_interval": "SQL read retries",
  "buffer.trainer_input.experience_buffer.enable_progress_bar": "tqdm",
  "buffer.trainer_input.experience_buffer.schema_type": "Set by Trinity itself",
  "buffer.trainer_input.experience_buffer.index": "Set by Trinity itself",
  "buffer.trainer_input.experience_buffer.batch_size": "Set by Trinity itself",
  "buffer.trainer_input.experience_buffer.tokenizer_path": "Set by Trinity itself",
  "buffer.trainer_input.experience_buffer.total_epochs": "Set by Trinity itself",
  "buffer.trainer_input.experience_buffer.total_steps": "Set by Trinity itself",
  "buffer.trainer_input.experience_buffer.ray_namespace": "Ray",
  "algorithm.enable_router_replay": "MoE routing replay in vLLM",
  "algorithm.bypass_old_logprobs": "rft recomputes no old logprobs: it uses the rollout's",
  "algorithm.optimizer.optimizer_type": "rft's optimizer is AdamW",
  "algorithm.optimizer.lr_warmup_steps_ratio": "Use lr_warmup_steps",
  "explorer.name": "Ray actor name",
  "explorer.mode": "Set by Trinity itself",
  "explorer.runner_prepare_concurrency": "Ray workers",
  "explorer.runner_prepare_max_retries": "Ray workers",
  "explorer.env_vars": "Ray worker environment",
  "explorer.concurrent_mode": "Ray workers",
  "explorer.max_repeat_times_per_runner": "Ray workers",
  "explorer.bench_on_latest_checkpoint": "Serve / bench proxy",
  "explorer.proxy_port": "Serve mode proxy",
  "explorer.listen_address": "Serve mode proxy",
  "explorer.service_status_check_interval": "Serve mode proxy",
  "explorer.min_running_model_num": "Serve mode proxy",
  "explorer.db_url": "Serve mode proxy",
  "explorer.over_rollout": "Multi-engine scheduling",
  "explorer.dynamic_timeout": "Multi-engine scheduling",
  "explorer.runner_state_report_interval": "Ray workers",
  "explorer.max_inflight_batches": "Multi-engine scheduling",
  "trainer.name": "Ray actor name",
  "trainer.trainer_type": "rft has one trainer",
  "trainer.trainer_strategy": "FSDP / Megatron sharding",
  "trainer.enable_preview": "wandb preview",
  "trainer.save_hf_checkpoint": "rft's checkpoints are HF safetensors always",
  "trainer.use_dynamic_bsz": "verl micro-batching (rft: trainer.max_tokens_per_micro_batch)",
  "trainer.use_remove_padding": "verl",
  "trainer.balance_batch": "verl data parallelism",
  "trainer.max_token_len_per_gpu": "verl micro-batching (rft: trainer.max_tokens_per_micro_batch)",
  "trainer.ulysses_sequence_parallel_size": "Sequence parallelism over GPUs",
  "trainer.fix_actor_microbatch_loss_scale": "verl",
  "trainer.param_offload": "FSDP offloading",
  "trainer.optimizer_offload": "FSDP offloading",
  "trainer.grad_offload": "FSDP offloading",
  "trainer.offload_policy": "FSDP offloading",
  "trainer.save_strategy": "Multi-process checkpoint saving",
  "trainer.megatron": "Megatron parallelism",
  "trainer.trust_remote_code": "Set by Trinity itself",
  "trainer.trainer_config": "verl's own config",
  "trainer.trainer_config_path": "verl's own config",
  "monitor.monitor_args": "wandb / mlflow settings",
  "monitor.detailed_stats": "rft logs mean metrics",
  "monitor.enable_ray_timeline": "Ray",
  "monitor.cache_dir": "Set by Trinity itself",
  "synchronizer.sync_timeout": "In-process hand-over does not time out",
  "synchronizer.group_name": "NCCL group",
  "synchronizer.wait_for_checkpoint": "Checkpoint sync between processes",
  "synchronizer.explorer_world_size": "Set by Trinity itself",
  "synchronizer.ray_namespace": "Ray",
  // Every key of an inference model rft neither implements nor maps: vLLM engine settings.
  ...Object.fromEntries(
    [...TRINITY_KEYS.keys()]
      .filter((key) => /^explorer\.(rollout_model|auxiliary_models\[\])\.[a-z0-9_]+$/.test(key))
      .map((key) => [key, "vLLM engine setting"]),
  ),
  ...Object.fromEntries(
    TASKSET_PATHS.flatMap((prefix) =>
      Object.entries({
        max_retry_times: "SQL read retries",
        max_retry_interval: "SQL read retries",
        enable_progress_bar: "tqdm",
        index: "Set by Trinity itself (rft saves its own cursor)",
        is_eval: "Set by Trinity itself",
        batch_size: "Set by Trinity itself",
        total_epochs: "Set by Trinity itself",
        total_steps: "Set by Trinity itself",
        ray_namespace: "Ray",
        repeat_times: "Eval repeats for mean@k / best@k (implemented by the run-loop branch)",
        "format.prompt_type": "Tasks are read by prompt_key / messages_key",
        "format.system_prompt_key": "Not supported for tasks: use system_prompt",
        "format.tools_key": "Tasks: the workflow builds the chat",
        "format.image_key": "Multi-modal: not supported",
        "format.video_key": "Multi-modal: not supported",
        "format.reply_prefix": "Not supported for tasks",
        "format.workflow_key": "Per-row workflows: not supported (one workflow per taskset)",
        "format.reward_fn_key": "Per-row reward fns: not supported (one per taskset)",
        "format.chosen_key": "DPO data is read from sft_warmup_dataset",
        "format.rejected_key": "DPO data is read from sft_warmup_dataset",
        "format.enable_concatenated_multi_turn": "Multi-turn SFT option",
        "format.chat_template": "The model's chat template is used",
        "format.enable_thinking": "The model's chat template is used",
        "data_selector.feature_keys": "Difficulty-based selectors",
        "data_selector.kwargs": "Difficulty-based selectors",
        "task_selector.feature_keys": "Difficulty-based selectors",
        "task_selector.kwargs": "Difficulty-based selectors",
      }).map(([key, why]) => [`${prefix}.${key}`, why])
    ),
  ),
};

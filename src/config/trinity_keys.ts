/**
 * Every key of Trinity-RFT's config schema (its `trinity/common/config.py` dataclasses, as of
 * 2026-11), as key paths: `a.b.c`, `a.b[].c` for list items. A key marked `free` takes any
 * mapping below it (verl's `trainer_config`, `*_args`). This is data only: what rft does with
 * each key is `trinity_compat.ts`'s (mapped or ignored) or the schema's (implemented).
 */

/** A section: its keys; a key's value is a nested section, `FREE`, a list of one section, or null. */
interface KeyTree {
  readonly [key: string]: KeyTree | KeyTree[] | null | typeof FREE;
}

/** A key whose value is a free mapping (any keys below it are accepted). */
export const FREE = "free";

/** Keys without children, written as a list. */
function leaves(...names: string[]): KeyTree {
  return Object.fromEntries(names.map((n) => [n, null]));
}

const FORMAT = leaves(
  "prompt_type",
  "prompt_key",
  "response_key",
  "system_prompt_key",
  "system_prompt",
  "messages_key",
  "tools_key",
  "image_key",
  "video_key",
  "reply_prefix",
  "workflow_key",
  "reward_fn_key",
  "chosen_key",
  "rejected_key",
  "enable_concatenated_multi_turn",
  "chat_template",
  "enable_thinking",
);
const GENERATION = leaves("temperature", "top_p", "top_k", "logprobs", "max_tokens", "n");
const OPTIMIZER = leaves(
  "lr",
  "lr_warmup_steps",
  "lr_warmup_steps_ratio",
  "min_lr_ratio",
  "warmup_style",
  "lr_scheduler_type",
  "optimizer_type",
  "betas",
  "weight_decay",
  "clip_grad",
  "fused",
  "foreach",
);
const LORA = leaves(
  "name",
  "path",
  "base_model_name",
  "lora_rank",
  "lora_alpha",
  "lora_dtype",
  "target_modules",
  "exclude_modules",
  "is_dummy",
);
const DATA_SELECTOR: KeyTree = {
  ...leaves("selector_type", "seed", "feature_keys"),
  kwargs: FREE,
};
const REPLAY_BUFFER: KeyTree = {
  ...leaves("enable", "priority_fn", "reuse_cooldown_time"),
  priority_fn_args: FREE,
};
const TASKSET: KeyTree = {
  ...leaves("name", "storage_type", "path", "default_workflow_type", "default_reward_fn_type"),
  rollout_args: GENERATION,
  workflow_args: FREE,
  reward_fn_args: FREE,
  task_selector: DATA_SELECTOR,
  data_selector: DATA_SELECTOR,
  ...leaves("split", "subset_name"),
  format: FORMAT,
  ...leaves(
    "max_retry_times",
    "max_retry_interval",
    "enable_progress_bar",
    "repeat_times",
    "index",
    "is_eval",
    "batch_size",
    "total_epochs",
    "total_steps",
    "ray_namespace",
  ),
};
const EXPERIENCE_BUFFER: KeyTree = {
  ...leaves("name", "storage_type", "path", "capacity", "max_read_timeout"),
  replay_buffer: REPLAY_BUFFER,
  ...leaves("max_retry_times", "max_retry_interval", "split", "subset_name"),
  format: FORMAT,
  enable_progress_bar: null,
  data_selector: DATA_SELECTOR,
  ...leaves(
    "schema_type",
    "index",
    "batch_size",
    "tokenizer_path",
    "total_epochs",
    "total_steps",
    "ray_namespace",
  ),
};
/** The sampling keys the model and each inference model share, in Trinity's order. */
const SAMPLING = [
  "temperature",
  "top_p",
  "top_k",
  "logprobs",
  "max_model_len",
  "max_prompt_tokens",
  "max_response_tokens",
  "min_response_tokens",
  "enable_prompt_truncation",
  "repetition_penalty",
];
const OPERATOR: KeyTree = { name: null, args: FREE };
const EXTERNAL_MODEL = leaves("enable", "base_url_env", "api_key_env", "model_name");
const INFERENCE_MODEL: KeyTree = {
  ...leaves(
    "model_path",
    "name",
    "trust_remote_code",
    "engine_type",
    "engine_num",
    "tensor_parallel_size",
    "data_parallel_size",
    "pipeline_parallel_size",
    "enable_expert_parallel",
    "gpu_per_engine",
  ),
  extra_engine_args: FREE,
  ...leaves(
    "use_v1",
    "enforce_eager",
    "enable_prefix_caching",
    "enable_chunked_prefill",
    "gpu_memory_utilization",
    "dtype",
    "seed",
    ...SAMPLING,
    "ignore_eos",
    "enable_multimodal",
    "chat_template",
    "enable_thinking",
    "enable_history",
    "enable_openai_api",
    "enable_log_requests",
    "base_port",
    "api_key",
    "enable_auto_tool_choice",
    "tool_call_parser",
    "reasoning_parser",
  ),
  external_model_config: EXTERNAL_MODEL,
  ...leaves(
    "nnodes",
    "node_rank",
    "enable_return_routed_experts",
    "weight_sync_buffer_size",
    "bundle_indices",
    "engine_id",
    "ray_namespace",
    "ray_actor_name",
    "sync_method",
    "checkpoint_job_dir",
    "cuda_visible_devices",
    "enable_lora",
    "enable_runtime_lora_updating",
  ),
  lora_modules: FREE,
  lora_kwargs: FREE,
  rope_scaling: FREE,
  rope_theta: null,
};
const ALGORITHM: KeyTree = {
  ...leaves("algorithm_type", "repeat_times"),
  optimizer: OPTIMIZER,
  ...Object.fromEntries(
    ["sample_strategy", "advantage_fn", "kl_penalty_fn", "policy_loss_fn", "kl_loss_fn"]
      .concat("entropy_loss_fn")
      .flatMap((c) => [[c, null], [`${c}_args`, FREE]]),
  ),
  ...leaves("loss_agg_mode", "enable_router_replay", "bypass_old_logprobs"),
  rollout_correction: FREE,
};
const DATA_PROCESSOR: KeyTree = {
  task_pipeline: {
    operators: [OPERATOR],
    ...leaves("num_process", "config_path", "inputs"),
    output: FREE,
    target_fields: null,
    priority_weights: FREE,
    top_k: null,
  },
  experience_pipeline: {
    operators: [OPERATOR],
    ...leaves("save_input", "input_save_path"),
    inputs: FREE,
    output: FREE,
  },
};
const MODEL: KeyTree = {
  ...leaves(
    "model_path",
    "trust_remote_code",
    "critic_model_path",
    "custom_chat_template",
    "chat_template_path",
    ...SAMPLING,
    "enable_thinking",
  ),
  lora_configs: [LORA],
  ...leaves("fully_sharded_loras", "max_cpu_loras"),
  rope_scaling: FREE,
  rope_theta: null,
  tinker: leaves(
    "enable",
    "rank",
    "seed",
    "train_mlp",
    "train_attn",
    "train_unembed",
    "base_url",
  ),
  external_model: EXTERNAL_MODEL,
};
const CLUSTER = leaves(
  "ray_address",
  "node_num",
  "gpu_per_node",
  "total_gpu_num",
  "rollout_gpu_num",
  "auxiliary_model_gpu_num",
  "explorer_gpu_num",
  "trainer_gpu_num",
  "trainer_node_num",
  "trainer_gpu_num_per_node",
);
const BUFFER: KeyTree = {
  ...leaves("batch_size", "train_batch_size", "total_epochs", "total_steps"),
  explorer_input: {
    taskset: TASKSET,
    tasksets: [TASKSET],
    eval_tasksets: [TASKSET],
    ...leaves("default_workflow_type", "default_eval_workflow_type", "default_reward_fn_type"),
  },
  trainer_input: { experience_buffer: EXPERIENCE_BUFFER, auxiliary_buffers: FREE },
  explorer_output: FREE,
  ...leaves("tokenizer_path", "cache_dir"),
  // Earlier Trinity releases (examples/sft_mot still writes them): SQL read retries.
  ...leaves("max_retry_times", "max_retry_interval"),
};
const EXPLORER: KeyTree = {
  ...leaves(
    "name",
    "mode",
    "runner_per_model",
    "runner_prepare_concurrency",
    "runner_prepare_max_retries",
    "max_timeout",
    "max_retry_times",
  ),
  env_vars: FREE,
  ...leaves("concurrent_mode", "max_repeat_times_per_runner", "runner_num"),
  rollout_model: INFERENCE_MODEL,
  auxiliary_models: [INFERENCE_MODEL],
  ...leaves(
    "eval_interval",
    "eval_on_startup",
    "bench_on_latest_checkpoint",
    "proxy_port",
    "listen_address",
    "service_status_check_interval",
    "min_running_model_num",
    "db_url",
  ),
  over_rollout: leaves("ratio", "wait_after_min", "return_partial_tasks"),
  dynamic_timeout: leaves("enable", "warmup_min_steps", "ratio"),
  ...leaves("runner_state_report_interval", "max_inflight_batches"),
};
const TRAINER: KeyTree = {
  ...leaves(
    "name",
    "trainer_type",
    "trainer_strategy",
    "save_interval",
    "enable_preview",
    "total_steps",
    "save_hf_checkpoint",
    "grad_clip",
    "use_dynamic_bsz",
    "use_remove_padding",
    "balance_batch",
    "critic_warmup",
    "max_token_len_per_gpu",
    "ulysses_sequence_parallel_size",
    "fix_actor_microbatch_loss_scale",
    "param_offload",
    "optimizer_offload",
    "grad_offload",
    "offload_policy",
    "save_strategy",
    "max_checkpoints_to_keep",
  ),
  megatron: leaves(
    "tensor_model_parallel_size",
    "pipeline_model_parallel_size",
    "virtual_pipeline_model_parallel_size",
    "expert_model_parallel_size",
    "expert_tensor_parallel_size",
    "context_parallel_size",
    "sequence_parallel",
  ),
  trust_remote_code: null,
  trainer_config: FREE,
  trainer_config_path: null,
};
const STAGE: KeyTree = {
  ...leaves("stage_name", "mode"),
  algorithm: ALGORITHM,
  buffer: BUFFER,
  data_processor: DATA_PROCESSOR,
  explorer: EXPLORER,
  trainer: TRAINER,
};

/** Trinity's `Config`. */
const CONFIG: KeyTree = {
  ...leaves(
    "mode",
    "project",
    "group",
    "name",
    "checkpoint_root_dir",
    "checkpoint_job_dir",
    "ray_namespace",
    "continue_from_checkpoint",
    "ignore_validator_suggestions",
  ),
  algorithm: ALGORITHM,
  data_processor: DATA_PROCESSOR,
  model: MODEL,
  cluster: CLUSTER,
  buffer: BUFFER,
  explorer: EXPLORER,
  trainer: TRAINER,
  monitor: {
    monitor_type: null,
    monitor_args: FREE,
    ...leaves("detailed_stats", "enable_ray_timeline", "cache_dir"),
  },
  synchronizer: leaves(
    "sync_method",
    "sync_style",
    "sync_interval",
    "explorer_sync_interval",
    "trainer_sync_interval",
    "sync_offset",
    "sync_timeout",
    "group_name",
    "wait_for_checkpoint",
    "explorer_world_size",
    "ray_namespace",
  ),
  service: { data_juicer: leaves("server_url", "auto_start", "port") },
  log: leaves("level", "group_by_node", "save_dir"),
  cod: {
    ...leaves("task_pack_size", "eval_task_pack_size", "packing_strategy"),
    cod_workflow_args: FREE,
  },
  stages: [STAGE],
};

/** What a Trinity key holds: a value, a section of keys, or a free mapping. */
export type TrinityKeyKind = "value" | "section" | "free";

/**
 * Every Trinity key path with its kind, in the order of Trinity's dataclasses; list items are
 * `[]` (`buffer.explorer_input.eval_tasksets[].path`). Keys under `stages[]` are listed once
 * under `stages[]` and are the top-level keys of the same name.
 */
export const TRINITY_KEYS: ReadonlyMap<string, TrinityKeyKind> = flatten(CONFIG);

function flatten(tree: KeyTree, prefix = "", out = new Map<string, TrinityKeyKind>()) {
  for (const [key, value] of Object.entries(tree)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (value === null) out.set(path, "value");
    else if (value === FREE) out.set(path, "free");
    else if (Array.isArray(value)) {
      out.set(path, "section");
      flatten(value[0], `${path}[]`, out);
    } else {
      out.set(path, "section");
      flatten(value as KeyTree, path, out);
    }
  }
  return out;
}

/**
 * The schema of `./rft run` configs, as one declarative table: for every YAML key its type,
 * default, range and a one-line description. The loader validates against it, the config types
 * (`run_config.ts`), the reference table and the resolved YAML come from it. A default computed
 * from other keys is marked `derived` (its words here) and filled by the loader's one pass in
 * `derived_defaults.ts`. No parsing here.
 */

import { ALGORITHM_TYPE } from "../algorithm/algorithm_type.ts";
import { TASK_SELECTORS } from "../buffer/selectors/mod.ts";
import {
  args,
  bool,
  type Fields,
  int,
  list,
  map,
  num,
  oneOf,
  section,
  type SectionField,
  str,
} from "./schema_fields.ts";

export type { Fields, FieldSchema, SectionField } from "./schema_fields.ts";

/** A component name (the algorithm type's by default) and its `*_args`. */
function component<K extends string>(key: K, what: string) {
  return {
    [key]: str(`Name of the ${what}`, { derived: "the algorithm type's" }),
    [`${key}_args`]: args(`Arguments of the ${what} over its defaults (scalars)`),
  } as
    & { [P in K]: ReturnType<typeof str<{ derived: string }>> }
    & { [P in `${K}_args`]: ReturnType<typeof args> };
}

/** `buffer.explorer_input.taskset`, each entry of `tasksets` and of `eval_tasksets`. */
export const TASKSET_SCHEMA = section(
  {
    name: str("Name in logs and metric keys; the table of an `sqlite:///` path", {
      derived: "the file name without extension",
    }),
    path: str(
      "A .jsonl / .parquet file, a dataset directory, a cached Hub id or an `sqlite:///` URL",
      {
        required: true,
        path: "dataset",
      },
    ),
    split: str("Split read from a dataset directory", { default: "train" }),
    repeat_times: int("Samples per task (eval tasksets log mean@k and best@k for k samples)", {
      min: 1,
      derived: "rollout_args.n; else 1 for eval tasksets, algorithm.repeat_times for the taskset",
    }),
    subset_name: str("Subset (config) folder of a Hub dataset directory", {
      defaultDoc: "none: the split's files at the top or under data/",
    }),
    selector: oneOf(
      () => TASK_SELECTORS.names(),
      "Task selector: which rows each draw takes (Trinity's data_selector.selector_type)",
      { default: "sequential" },
    ),
    seed: int("Seed of the selector", { derived: "the run's seed" }),
    feature_keys: list(
      str("A numeric row key"),
      "Row keys the selector reads (difficulty columns, anchor pass rates); their values " +
        "among the drawn tasks are logged (Trinity's data_selector.feature_keys)",
    ),
    selector_args: args("Arguments of the selector over its defaults (data_selector.kwargs)"),
    weight: num("Share of each batch while in the mix (several tasksets)", {
      above: 0,
      defaultDoc: "the taskset's size (Trinity's proportional mix)",
    }),
    lesson: section(
      {
        window: int("Explore steps of the rolling pass rate", { default: 4, min: 1 }),
        graduate_pass_rate: num("Leave the mix once the rolling pass rate reaches this", {
          min: 0,
          max: 1,
          defaultDoc: "never",
        }),
        requires: str("Enter the mix only once this taskset (by name) reaches unlock_pass_rate", {
          defaultDoc: "in the mix from the start",
        }),
        unlock_pass_rate: num("Rolling pass rate of `requires` that lets this taskset in", {
          default: 0,
          min: 0,
          max: 1,
        }),
      },
      "Marin-style lesson: graduation and prerequisite (several tasksets)",
      { optional: true },
    ),
    format: section({
      prompt_key: str("Row key of the prompt", { default: "prompt" }),
      response_key: str("Row key of the reference answer"),
      system_prompt: str("System message put before the prompt"),
      messages_key: str("Row key of a ready chat (wins over the prompt)"),
    }, "Where rows keep their parts"),
    rollout_args: section({
      n: int("Rollouts per task", { min: 1, derived: "repeat_times (one value; n wins)" }),
      temperature: num("Sampling temperature (0 = greedy)", {
        min: 0,
        defaultDoc: "model.temperature",
      }),
      top_p: num("Nucleus sampling mass (1 = off)", {
        above: 0,
        max: 1,
        defaultDoc: "model.top_p",
      }),
      top_k: int("Keep the k most likely tokens (0 = off)", { min: 0, defaultDoc: "model.top_k" }),
      max_tokens: int("Most tokens per response", {
        min: 1,
        defaultDoc: "model.max_response_tokens",
      }),
    }, "Sampling of this taskset's rollouts"),
    workflow_args: map("Free arguments handed to the workflow"),
    default_workflow_type: str("Workflow of the tasks (wins over explorer_input's)", {
      derived: "buffer.explorer_input.default_workflow_type",
    }),
    default_reward_fn_type: str("Reward fn of the tasks (wins over explorer_input's)", {
      defaultDoc: "buffer.explorer_input.default_reward_fn_type",
    }),
    reward_fn_args: args("Arguments of the tasks' reward fn over its defaults (scalars)"),
  },
  "A taskset",
  { optional: true },
);

/** The keys of a stage, which are the top-level keys of a config. */
const TOP_FIELDS = {
  mode: oneOf(
    ["both", "explore", "train", "bench"],
    "What the run does (Trinity's colocate: both)",
    {
      default: "both",
      // Trinity's trainer and explorer sharing one GPU: rft's one process always does.
      aliases: { colocate: "both" },
    },
  ),
  project: str("Project name: the run lives in <checkpoint_root_dir>/<project>/<name>/", {
    default: "rft",
  }),
  group: str(
    "Run group (Trinity's): when set, the run lives in <checkpoint_root_dir>/<project>/<group>/<name>/",
    { default: "" },
  ),
  name: str("Run name", { default: "run" }),
  checkpoint_root_dir: str(
    "Root of run directories (relative: the working directory's folder when it exists, else the config file directory's)",
    {
      path: "resolve",
      derived: "./runs, relative to the current directory",
    },
  ),
  plugin_dirs: list(
    str("A directory of plugins", { path: "exists" }),
    "Directories whose *.ts plugins `rft run` loads before checking the rest (relative: to the config file's directory), besides ./plugins and each --plugin-dir",
    { scalarItem: true },
  ),
  continue_from_checkpoint: bool("Resume from the run directory when it holds state", {
    default: true,
  }),
  seed: int("Seed of data order, initialisation and sampling", { default: 42 }),
  model: section({
    model_path: str("HF model directory (config.json, tokenizer, weights)", {
      required: true,
      path: "model",
    }),
    from_scratch: bool("Initialise weights randomly (seeded) instead of loading safetensors", {
      default: false,
    }),
    max_prompt_tokens: int("Prompts longer than this are cut from the left", {
      default: 512,
      min: 1,
    }),
    max_response_tokens: int("Most tokens generated per response", { default: 128, min: 1 }),
    min_response_tokens: int(
      "Fewest tokens of a response before a stop token may end it (vLLM's min_tokens)",
      { default: 0, min: 0 },
    ),
    temperature: num("Sampling temperature of rollouts (0 = greedy)", { default: 1, min: 0 }),
    top_p: num("Nucleus sampling mass of rollouts (1 = off)", { default: 1, above: 0, max: 1 }),
    top_k: int("Top-k of rollouts (0 = off)", { default: 0, min: 0 }),
    chat_template_kwargs: args(
      "Variables every chat template render gets (vLLM's chat_template_kwargs), e.g. Qwen3's " +
        "enable_thinking",
    ),
    lora_configs: list(
      section({
        name: str("Name of the adapter (in logs)", { default: "default" }),
        path: str("A PEFT adapter directory to continue from (else A seeded, B zero)", {
          path: "exists",
        }),
        lora_rank: int("Rank r of the adapters", { default: 32, min: 1 }),
        lora_alpha: num("Scaling alpha: the update is (alpha / r) B A", { default: 32, above: 0 }),
        lora_dropout: num("Dropout on the adapters' input; rft has none, so only 0", {
          default: 0,
          min: 0,
          max: 0,
        }),
        target_modules: list(
          str("A module name (q_proj, ..., c_attn, c_proj, c_fc) or all-linear"),
          "Modules given adapters: all-linear, or PEFT's module names",
          { default: ["all-linear"], scalarItem: true },
        ),
      }, "A LoRA adapter"),
      "Train LoRA adapters on the frozen policy instead of all weights (at most one entry)",
      { maxLength: 1 },
    ),
  }, "The policy model and its sampling defaults"),
  algorithm: section({
    algorithm_type: oneOf(() => ALGORITHM_TYPE.names(), "Algorithm (ALGORITHM_TYPE)", {
      default: "grpo",
    }),
    repeat_times: int("Rollouts per task", { min: 1, derived: "the algorithm type's" }),
    ...component("sample_strategy", "sample strategy"),
    advantage_fn: str("Name of the advantage fn", {
      defaultDoc: "the algorithm type's (none for sft and dpo)",
    }),
    advantage_fn_args: args("Arguments of the advantage fn over its defaults (scalars)", {
      derived: "the algorithm type's, under the keys given",
    }),
    policy_loss_fn: str("Name of the policy loss fn", { derived: "the algorithm type's" }),
    policy_loss_fn_args: args("Arguments of the policy loss fn over its defaults (scalars)", {
      derived: "the algorithm type's, under the keys given",
    }),
    ...component("kl_penalty_fn", "KL fn of the reward penalty"),
    ...component("kl_loss_fn", "KL fn of the loss term"),
    ...component("entropy_loss_fn", "entropy loss fn"),
    dynamic_sampling: section({
      enable: bool(
        "DAPO's dynamic sampling: drop groups whose rewards are all equal and draw more tasks " +
          "until batch_size groups remain",
        { derived: "true for dapo, false otherwise" },
      ),
      max_num_gen_batches: int("Most batches of tasks drawn per explore step (0 = no limit)", {
        default: 10,
        min: 0,
      }),
    }, "Refilling filtered groups (verl's filter_groups)"),
    optimizer: section({
      lr: num("Learning rate", { default: 1e-6, above: 0 }),
      betas: list(num("AdamW beta", { min: 0, max: 1 }), "AdamW betas", {
        length: 2,
        default: [0.9, 0.999],
      }),
      eps: num("AdamW epsilon", { default: 1e-8, above: 0 }),
      weight_decay: num("AdamW weight decay", { default: 0.01, min: 0 }),
      lr_warmup_steps: int("Linear warmup steps from 0 to lr", { default: 0, min: 0 }),
      warmup_style: oneOf(["constant", "cosine", "linear"], "Decay after warmup", {
        default: "constant",
      }),
      min_lr_ratio: num("Final lr of the decays as a fraction of lr", {
        default: 0,
        min: 0,
        max: 1,
      }),
      grad_clip: num("Global gradient-norm clip (0 = none)", { default: 1, min: 0 }),
      moments_dtype: oneOf(
        ["float32", "bfloat16"],
        "How AdamW's two moments are stored (bfloat16: 4 bytes per trained parameter, not 8)",
        { default: "float32" },
      ),
    }, "AdamW and its learning-rate schedule"),
  }, "The algorithm type and the components it overrides"),
  buffer: section({
    batch_size: int("Tasks per explore step", { default: 8, min: 1 }),
    train_batch_size: int("Experiences per train step", {
      min: 1,
      derived: "batch_size * repeat_times",
    }),
    total_epochs: int("Passes over the taskset", { default: 1, min: 1 }),
    total_steps: int("Stop after this many steps", {
      min: 1,
      defaultDoc: "when the taskset's epochs are used up",
    }),
    explorer_input: section({
      taskset: TASKSET_SCHEMA,
      tasksets: list(
        TASKSET_SCHEMA,
        "Several tasksets mixed by weight, each with its selector and lesson (or one `taskset`)",
      ),
      eval_tasksets: list(TASKSET_SCHEMA, "Tasksets evaluated every explorer.eval_interval steps"),
      default_workflow_type: str("Workflow of the tasks of every taskset", {
        default: "math_workflow",
      }),
      default_reward_fn_type: str("Reward fn of the tasks of every taskset"),
    }, "What the explorer reads"),
    trainer_input: section({
      experience_buffer: section({
        capacity: int("Most experiences held", {
          min: 1,
          defaultDoc: "4 * batch_size * repeat_times in mode both; unbounded in modes explore " +
            "and train",
        }),
        max_staleness: int("Drop experiences older than this many policy versions", {
          min: 0,
          defaultDoc: "unlimited",
        }),
        replay: section(
          {
            decay: num("linear_decay priority: version - decay * use count", {
              default: 0.1,
              min: 0,
            }),
            reuse_cooldown_ms: int("Milliseconds before a taken experience can be taken again", {
              default: 0,
              min: 0,
            }),
            max_use_count: int("Uses after which an experience is retired", {
              min: 1,
              defaultDoc: "unlimited",
            }),
          },
          "Reuse experiences by priority (absent: each used once)",
          { optional: true },
        ),
        path: str("Existing experience directory or JSONL file to train from", {
          path: "exists",
          defaultDoc: "the run directory's experiences/",
        }),
      }, "Where experiences wait for the trainer"),
      sft_warmup_dataset: section(
        {
          path: str("A .jsonl / .parquet file, a dataset directory or a cached Hub id", {
            required: true,
            path: "dataset",
          }),
          split: str("Split read from a dataset directory", { default: "train" }),
          subset_name: str("Subset (config) folder of a Hub dataset directory", {
            defaultDoc: "none: the split's files at the top or under data/",
          }),
          format: section({
            prompt_type: oneOf(["messages", "plaintext"], "Rows hold a chat or a prompt", {
              derived: "messages when messages_key is set or the dataset is Trinity's " +
                "experience_buffer, else plaintext",
            }),
            prompt_key: str("Row key of the prompt", { default: "prompt" }),
            response_key: str("Row key of the response (plaintext rows)", { default: "response" }),
            system_prompt: str("System message put before the prompt"),
            messages_key: str("Row key of a ready chat (wins over the prompt)", {
              defaultDoc: '"message" when prompt_type is messages (Trinity\'s default)',
            }),
            tools_key: str(
              "Row key of a chat row's tools (a list or its JSON text), passed to the chat template",
              { default: "tools" },
            ),
            chosen_key: str("DPO: row key of the chosen response"),
            rejected_key: str("DPO: row key of the rejected response"),
          }, "Where rows keep their parts"),
        },
        "SFT / DPO data (algorithms sft, dpo, mix)",
        { optional: true },
      ),
    }, "What the trainer reads"),
  }, "Batches, epochs and data"),
  explorer: section({
    runner_num: int("Workflow runners running concurrently", { default: 4, min: 1 }),
    max_timeout: num("Seconds a workflow may run before it is abandoned", {
      default: 1800,
      above: 0,
    }),
    max_retry_times: int("Retries of a failed or timed-out workflow", { default: 2, min: 0 }),
    eval_interval: int("Evaluate every this many explore steps (0 = never)", {
      default: 0,
      min: 0,
    }),
    eval_on_startup: bool("Evaluate before the first step", {
      derived: "true when there are eval tasksets",
    }),
    auxiliary_models: list(
      section({
        name: str("Name workflows and reward fns look it up by (and its API model id)", {
          required: true,
        }),
        model_path: str("HF model directory, run on rft's engine (give this or onnx_path)", {
          path: "model",
        }),
        onnx_path: str("ONNX file, run on onnxruntime-web's CPU backend", { path: "exists" }),
        max_prompt_tokens: int("HF model: longer prompts are cut from the left", {
          default: 512,
          min: 1,
        }),
        max_response_tokens: int("HF model: most tokens per response", { default: 128, min: 1 }),
        temperature: num("HF model: sampling temperature of calls that give none", {
          default: 1,
          min: 0,
        }),
      }, "An auxiliary model"),
      "Models workflows and reward fns use but the run does not train",
    ),
    rollout_model: section({
      enable_openai_api: bool("Serve the policy over an OpenAI-compatible API", { default: false }),
      openai_api_host: str("Address the API listens on", { default: "127.0.0.1" }),
      openai_api_port: int("Port of the API (0 = a free one)", { default: 0, min: 0, max: 65535 }),
      openai_api_key: str("Key every API request must send as a Bearer token", {
        defaultDoc: "none",
      }),
      enable_auto_tool_choice: bool(
        'Read the policy\'s replies as tool calls for tool_choice "auto" (false: such requests get a 400, as vLLM gives them)',
        { default: true },
      ),
      tool_call_parser: str(
        "How the API reads tool calls: hermes, llama3_json or a plugin's parser",
        { defaultDoc: "the format the chat template writes" },
      ),
      dtype: oneOf(
        ["auto", "float32", "bfloat16", "float16"],
        "Dtype of the explorer's copy of trained weights (auto: the checkpoint's torch_dtype)",
        { default: "auto" },
      ),
    }, "The rollout model"),
  }, "The explorer"),
  synchronizer: section({
    sync_interval: int("Train steps between weight syncs", { default: 1, min: 1 }),
    sync_offset: int("Explore steps the explorer may run ahead of the trainer", {
      default: 0,
      min: 0,
    }),
    sync_style: oneOf(
      ["fixed", "explorer_driven", "trainer_driven"],
      "Who drives weight syncs (Trinity's dynamic_by_explorer: explorer_driven; dynamic_by_trainer and fully_async: trainer_driven)",
      {
        default: "fixed",
        // fully_async: the explorer takes the trainer's weights as soon as they are pushed, between
        // two generation batches, which is what trainer_driven does.
        aliases: {
          dynamic_by_explorer: "explorer_driven",
          dynamic_by_trainer: "trainer_driven",
          fully_async: "trainer_driven",
        },
      },
    ),
  }, "Weight hand-over from trainer to explorer"),
  cluster: section({
    backend: oneOf(
      ["none", "nats", "local"],
      "Where explorers and the trainer meet: local is a trainer (mode train) and an explorer " +
        "(mode explore) process on this machine, over a nats-server the trainer starts " +
        "(Trinity's queue experience buffer in mode train or explore sets it)",
      {
        default: "none",
        derived: "nats when RFT_NATS_URL is set, else none (one process)",
      },
    ),
    url: str("NATS server URL(s), comma-separated", {
      derived: "RFT_NATS_URL, else nats://127.0.0.1:4222",
    }),
    ack_wait: int("Seconds before a task batch of a silent explorer goes to another", {
      default: 60,
      min: 1,
    }),
    weight_dtype: oneOf(["f32", "bf16"], "How synced weights travel (bf16: half the bytes)", {
      default: "f32",
    }),
  }, "Explorers on several machines (mode explore) and one trainer (mode train), over NATS"),
  trainer: section({
    save_interval: int("Checkpoint every this many train steps (0 = only at the end)", {
      default: 0,
      min: 0,
    }),
    max_checkpoints_to_keep: int("Complete checkpoints kept", { min: 1, defaultDoc: "all" }),
    max_tokens_per_micro_batch: int(
      "Token budget (rows x row length) of a micro-batch; gradients are accumulated over them",
      {
        min: 1,
        defaultDoc: "the whole batch, or what keeps its activations in one storage binding",
      },
    ),
    pack_sequences: bool("Pack several sequences per row when every loss term is token-mean", {
      default: false,
    }),
    gradient_checkpointing: bool(
      "Recompute each decoder layer's activations in the backward pass instead of keeping them",
      { defaultDoc: "when the activations a step would keep reach 128 MiB" },
    ),
    ppo_epochs: int("PPO epochs over each batch", { default: 1, min: 1 }),
    ppo_mini_batch_size: int("Experiences per optimizer step within a batch", {
      min: 1,
      defaultDoc: "the whole batch",
    }),
    critic_lr: num("Peak learning rate of the critic (algorithms with one: ppo)", {
      above: 0,
      derived: "algorithm.optimizer.lr",
    }),
    cliprange_value: num("Half-width of the critic's value clip around the rollout values", {
      default: 0.5,
      above: 0,
    }),
  }, "The trainer"),
  monitor: section({
    tensorboard: bool("Write TensorBoard event files under <run>/tensorboard/", { default: true }),
    console: bool("Print a progress line", { default: true }),
    monitors: list(
      str("A registered monitor: wandb, or a plugin's"),
      "More monitors besides metrics.jsonl, the console and TensorBoard (Trinity's monitor_type " +
        "adds its one here); one that cannot open says why and the others go on",
      { default: [], scalarItem: true },
    ),
  }, "Logging"),
  data_processor: section({
    experience_pipeline: section({
      operators: list(
        section({
          name: str("Registered operator name", { required: true }),
          args: args("Arguments of the operator (scalars)"),
        }, "An operator"),
        "Operators applied to each batch of experiences, in order",
      ),
    }, "The experience pipeline"),
  }, "Data processing"),
} satisfies Fields;

/** A stage: its name and any top-level key, deep-merged over the top level. */
const STAGE = section({
  stage_name: str("Unique name of the stage", { required: true }),
  ...TOP_FIELDS,
}, "A stage");

/** Everything a config file may hold. */
export const CONFIG_SCHEMA: SectionField = section({
  ...TOP_FIELDS,
  stages: list(STAGE, "Stages run in order; each takes stage_name and any top-level key", {
    defaultDoc: 'one stage "main" with the top-level keys',
  }),
}, "A run config");

/** The top-level keys of one stage (the schema without `stages`). */
export const STAGE_SCHEMA = section(TOP_FIELDS, "One stage");

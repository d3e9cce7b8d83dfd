/**
 * The Trinity-RFT keys rft gives a meaning although its own schema lacks them (`MAPPED`): each
 * with a rule that moves the value onto rft's keys, or checks that rft can honour it (else a
 * one-line error saying why). The rules run in `trinity_compat.ts`; the keys rft drops are in
 * `trinity_ignored.ts`.
 */

import { ConfigError } from "./config_error.ts";
import { isSqliteUrl } from "../buffer/sqlite_rows.ts";
import { type ConfigNode, describeNode } from "./config_tree.ts";
import { ALGORITHM_TYPE } from "../algorithm/algorithm_type.ts";
import { POLICY_LOSS_FN } from "../algorithm/policy_loss/mod.ts";

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
  /**
   * Sets `path` (from the root) to `value` unless it is written already (in the config; a
   * command-line override sets it whatever is written).
   */
  setIfAbsent(path: readonly string[], value: ConfigNode): void;
  /** Sets `key` of `map` to `value` with the same rule as {@link setIfAbsent}. */
  put(map: MapNode, key: string, value: ConfigNode): void;
  /** Adds a warning line. */
  note(line: string): void;
  /** Lists `path` among the ignored keys. */
  ignore(path: string): void;
  /** Whether a relative or absolute path names something (the working directory first). */
  exists(path: string): boolean;
}

/** A Trinity key rft gives a meaning: its rule and, for the docs, what it does. */
export interface MappedKey {
  doc: string;
  apply(ctx: RuleContext): void;
}

/** Where tasksets are, in Trinity's key paths. */
export const TASKSET_PATHS = [
  "buffer.explorer_input.taskset",
  "buffer.explorer_input.tasksets[]",
  "buffer.explorer_input.eval_tasksets[]",
];

/** The keys of an experience or auxiliary buffer that describe a dataset. */
const DATASET_KEYS = ["path", "split", "subset_name", "format"];

/** The scalar text at `keys` under `node`. */
function textAt(node: ConfigNode | undefined, ...keys: string[]): string | undefined {
  for (const key of keys) node = node?.kind === "map" ? node.entries.get(key) : undefined;
  return node?.kind === "scalar" && typeof node.value === "string" ? node.value : undefined;
}

/** The algorithm type a stage root names (Trinity's default: ppo), when rft knows it. */
function algorithmOf(root: ConfigNode) {
  const name = textAt(root, "algorithm", "algorithm_type") ?? "ppo";
  return ALGORITHM_TYPE.has(name) ? ALGORITHM_TYPE.get(name) : undefined;
}

/** Whether the stage trains on a dataset (sft, dpo) rather than on rollouts. */
function trainsOnDataset(root: ConfigNode): boolean {
  const type = algorithmOf(root);
  return type !== undefined && type.schema !== "experience";
}

/** The policy loss an `algorithm` section uses: its own, or its type's default. */
function policyLossOf(algorithm: ConfigNode): string | undefined {
  const own = textAt(algorithm, "policy_loss_fn");
  const type = ALGORITHM_TYPE.has(textAt(algorithm, "algorithm_type") ?? "ppo")
    ? ALGORITHM_TYPE.get(textAt(algorithm, "algorithm_type") ?? "ppo")
    : undefined;
  const name = own ?? type?.defaultConfig.policyLossFn;
  return name && POLICY_LOSS_FN.has(name) ? name : undefined;
}

/** The auxiliary buffer a mix strategy reads (`sample_strategy_args.sft_dataset_name`). */
function sftDatasetName(root: ConfigNode): string {
  return textAt(root, "algorithm", "sample_strategy_args", "sft_dataset_name") ?? "sft_dataset";
}

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
    apply: ({ node, parent, put }) => put(parent, to, node),
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
      // Trinity's docs write Python's None for null (`custom_chat_template: None`).
      const same = node.kind === "scalar" &&
        (node.value === value || (value === null && node.value === "None"));
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

/** rft's taskset key for each key of Trinity's `data_selector`. */
const SELECTOR_KEYS: Readonly<Record<string, string>> = {
  selector_type: "selector",
  seed: "seed",
  feature_keys: "feature_keys",
  kwargs: "selector_args",
};

/** A taskset's `data_selector` (or deprecated `task_selector`): read as its selector keys. */
const SELECTOR_SECTION: MappedKey = {
  doc: "`selector_type`, `seed`, `feature_keys`, `kwargs` read as the taskset's `selector`, " +
    "`seed`, `feature_keys`, `selector_args`",
  apply: ({ node, parent, put }) => {
    if (node.kind !== "map") return;
    for (const [key, value] of node.entries) put(parent, SELECTOR_KEYS[key], value);
  },
};

/** The node at `steps` below `node` through mappings, or undefined. */
function entryAt(node: ConfigNode, steps: readonly string[]): ConfigNode | undefined {
  let at: ConfigNode | undefined = node;
  for (const step of steps) at = at?.kind === "map" ? at.entries.get(step) : undefined;
  return at;
}

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
  "trainer.trainer_config": {
    doc: "verl's own config: `actor_rollout_ref.model.enable_gradient_checkpointing` is read as " +
      "`trainer.gradient_checkpointing`; the rest is ignored",
    apply: ({ node, path, setIfAbsent, ignore }) => {
      const flag = entryAt(node, ["actor_rollout_ref", "model", "enable_gradient_checkpointing"]);
      if (flag) setIfAbsent(["trainer", "gradient_checkpointing"], flag);
      ignore(path);
    },
  },
  "trainer.total_steps": moveTo("buffer.total_steps"),
  "trainer.max_checkpoints_to_keep": unsetWhen(0, "`0` (Trinity's keep all) is rft's default"),
  "algorithm.optimizer.clip_grad": renameTo("grad_clip"),
  "algorithm.optimizer.lr_warmup_steps": unsetWhen(-1, "`-1` (Trinity's none) is rft's `0`"),
  "algorithm.optimizer.lr_scheduler_type": {
    doc: "`constant` / `cosine` / `linear` read as `warmup_style`",
    apply: (ctx) => {
      oneOfThenDrop(["constant", "cosine", "linear"], "").apply(ctx);
      ctx.put(ctx.parent, "warmup_style", ctx.node);
    },
  },
  "buffer.train_batch_size": unsetWhen(0, "`0` (Trinity's default) is batch_size * repeat_times"),
  "buffer.explorer_input.default_eval_workflow_type": {
    doc: "The workflow of every eval taskset that names none",
    apply: ({ node, parent, put }) => {
      const evals = parent.entries.get("eval_tasksets");
      for (const item of evals?.kind === "list" ? evals.items : []) {
        if (item.kind === "map") put(item, "default_workflow_type", node);
      }
    },
  },
  "buffer.trainer_input.experience_buffer.storage_type": {
    doc: "Any of queue, file, sql: rft's experience buffer is in memory, persisted under " +
      "<run>/experiences/ (for sft / dpo stages the buffer is the dataset); `queue` in mode " +
      "train or explore (Trinity's trainer and explorer processes of one run) sets " +
      "`cluster.backend: local`",
    apply: (ctx) => {
      oneOfThenDrop(["queue", "file", "sql"], "").apply(ctx);
      const { node, parent, root, setIfAbsent, exists } = ctx;
      const mode = textAt(root, "mode");
      const path = textAt(parent, "path");
      const stored = path !== undefined && !/^sqlite:\/\//.test(path) && exists(path);
      if (
        node.kind === "scalar" && node.value === "queue" &&
        (mode === "train" || mode === "explore") &&
        !trainsOnDataset(root) && !stored
      ) {
        setIfAbsent(["cluster", "backend"], scalarAt(node, "local"));
      }
    },
  },
  "buffer.trainer_input.experience_buffer.path": {
    doc: "An sft / dpo stage's dataset, or a stored buffer folder a train-only RL stage reads; " +
      "a queue's persistence that is not one (an `sqlite:///` URL, a folder not there yet) " +
      "is dropped with a note: rft keeps experiences in <run>/experiences/",
    apply: ({ node, parent, root, note, exists }) => {
      const value = node.kind === "scalar" ? node.value : undefined;
      const stored = typeof value === "string" && !/^sqlite:\/\//.test(value) && exists(value);
      if (trainsOnDataset(root) || stored) {
        parent.entries.set("path", node);
        return;
      }
      note(
        `${node.origin.where}: ${node.origin.path} ${describeNode(node)}: rft keeps ` +
          "experiences in <run>/experiences/ instead",
      );
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
  "explorer.auxiliary_models[].model_path": {
    doc: "Kept; an entry without `name` is named by its model path (the model id vLLM " +
      "serves it under in Trinity)",
    apply: ({ key, node, parent }) => {
      parent.entries.set(key, node);
      if (!parent.entries.has("name") && node.kind === "scalar") {
        parent.entries.set("name", scalarAt(node, String(node.value)));
      }
    },
  },
  "explorer.rollout_model.api_key": {
    doc: "Read as `openai_api_key`; `EMPTY` (Trinity's default) is no key",
    apply: ({ node, parent, put }) => {
      if (!(node.kind === "scalar" && node.value === "EMPTY")) put(parent, "openai_api_key", node);
    },
  },
  "synchronizer.sync_method": oneOfThenDrop(
    ["nccl", "checkpoint", "memory"],
    "Any of nccl, checkpoint, memory: rft hands weights over in process",
  ),
  "monitor.monitor_type": {
    doc: "`tensorboard` sets `monitor.tensorboard`; another type (`wandb`, ...) is added to " +
      "`monitor.monitors`, TensorBoard staying on",
    apply: ({ node, parent }) => {
      const type = node.kind === "scalar" ? node.value : undefined;
      if (type === "tensorboard") {
        parent.entries.set("tensorboard", scalarAt(node, true));
        return;
      }
      const monitors = parent.entries.get("monitors");
      const items = monitors?.kind === "list" ? monitors.items : [];
      if (!items.some((i) => i.kind === "scalar" && i.value === type)) {
        parent.entries.set("monitors", {
          kind: "list",
          items: [...items, node],
          origin: node.origin,
        });
      }
    },
  },
  "algorithm.loss_agg_mode": {
    doc: "Sets `policy_loss_fn_args.loss_agg_mode` when the policy loss takes one (Trinity " +
      "overrides the loss's own value with it); the KL loss aggregates the same way",
    apply: ({ node, parent }) => {
      const name = policyLossOf(parent);
      if (!name || !Object.hasOwn(POLICY_LOSS_FN.get(name).defaultArgs, "loss_agg_mode")) return;
      const args = parent.entries.get("policy_loss_fn_args");
      const entries = new Map(args?.kind === "map" ? args.entries : []);
      entries.set("loss_agg_mode", node);
      parent.entries.set("policy_loss_fn_args", { kind: "map", entries, origin: node.origin });
    },
  },
  "algorithm.rollout_correction": onlyDefault(null, "rft has no rollout correction"),
  "data_processor.task_pipeline": refused("rft has no Data-Juicer task pipeline"),
  "data_processor.experience_pipeline.inputs": refused("rft has one experience stream"),
  "model.critic_model_path": {
    doc: "Only \"\" or the policy's own model_path (Trinity's default is the latter): rft's " +
      "critic starts from the policy",
    apply: (ctx) => {
      const { node, root } = ctx;
      const policy = textAt(root, "model", "model_path");
      if (node.kind === "scalar" && policy !== undefined && node.value === policy) return;
      onlyDefault("", "rft's critic starts from the policy's model_path").apply(ctx);
    },
  },
  "model.custom_chat_template": onlyDefault(null, "rft uses the model's chat template"),
  "model.chat_template_path": onlyDefault(null, "rft uses the model's chat template"),
  "model.repetition_penalty": onlyDefault(1, "rft's sampler has no repetition penalty"),
  "model.enable_thinking": moveTo(
    "model.chat_template_kwargs.enable_thinking",
    "Read as `model.chat_template_kwargs.enable_thinking`: every chat render of the policy gets " +
      "it, as Trinity passes it to vLLM",
  ),
  "model.lora_configs[].lora_dtype": oneOfThenDrop(
    ["auto", "float32", "fp32"],
    "auto, float32 or fp32: rft's adapters are f32",
  ),
  "model.lora_configs[].exclude_modules": onlyDefault(null, "list target_modules instead"),
  "model.lora_configs[].is_dummy": onlyDefault(false, "rft trains the adapter it is given"),
  "model.tinker": onlyDisabled("rft trains locally, not on Tinker"),
  "model.external_model": onlyDisabled("rft's policy is the local model"),
  "buffer.trainer_input.auxiliary_buffers": {
    doc: "The SFT buffer the mix strategies read (`sample_strategy_args.sft_dataset_name`, " +
      "default `sft_dataset`) is read as `sft_warmup_dataset` (path, split, subset_name, " +
      "format; chats by default); rft replays expert data without end, so its `total_epochs` " +
      "is not needed",
    apply: ({ node, parent, root, ignore, path }) => {
      if (node.kind !== "map") return;
      const wanted = sftDatasetName(root);
      const buffer = node.entries.get(wanted) ??
        (node.entries.size === 1 ? [...node.entries.values()][0] : undefined);
      if (buffer?.kind !== "map" || parent.entries.has("sft_warmup_dataset")) return;
      const dataset = new Map<string, ConfigNode>();
      for (const [key, value] of buffer.entries) {
        if (DATASET_KEYS.includes(key)) dataset.set(key, value);
        else ignore(`${path}.<name>.${key}`);
      }
      const format = dataset.get("format");
      const formatEntries = new Map(format?.kind === "map" ? format.entries : []);
      if (!formatEntries.has("prompt_type")) {
        formatEntries.set("prompt_type", scalarAt(buffer, "messages"));
      }
      dataset.set("format", { kind: "map", entries: formatEntries, origin: buffer.origin });
      parent.entries.set("sft_warmup_dataset", {
        kind: "map",
        entries: dataset,
        origin: buffer.origin,
      });
    },
  },
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
    storage_type: {
      doc:
        "`file` (a file or dataset directory) or `sql` (an `sqlite:///` path; the table is the " +
        "taskset's `name`); `queue` is refused: a taskset queue needs a producer process",
      apply: (ctx) => {
        const { node, parent } = ctx;
        if (node.kind === "scalar" && node.value === "queue") {
          throw new ConfigError(
            node.origin.where,
            node.origin.path,
            'expected file or sql, found "queue": a taskset queue is filled by another process ' +
              "(Trinity's data processor), which rft does not run",
          );
        }
        oneOfThenDrop(["file", "sql"], "").apply(ctx);
        const path = parent.entries.get("path");
        const sqlite = path?.kind === "scalar" && typeof path.value === "string" &&
          isSqliteUrl(path.value);
        const expected = sqlite ? "sql" : "file";
        if (!(node.kind === "scalar" && node.value === expected)) {
          throw new ConfigError(
            node.origin.where,
            node.origin.path,
            `expected ${expected} with path ${path ? describeNode(path) : "unset"} (sql reads ` +
              `an sqlite:/// path, file a file or directory), found ${describeNode(node)}`,
          );
        }
      },
    },
    "rollout_args.logprobs": {
      doc: "Any integer >= 0: rft records the sampled token's logprob (vLLM's top-k " +
        "alternatives are not kept; no algorithm here reads them)",
      apply: ({ node }) => {
        const value = node.kind === "scalar" ? node.value : undefined;
        if (!(Number.isInteger(value) && (value as number) >= 0)) {
          throw new ConfigError(
            node.origin.where,
            node.origin.path,
            `expected an integer >= 0, found ${describeNode(node)}`,
          );
        }
      },
    },
    "rollout_args.top_k": unsetWhen(-1, "`-1` (Trinity's off) is rft's `0`"),
    data_selector: SELECTOR_SECTION,
    task_selector: SELECTOR_SECTION,
  }),
};

/**
 * Trinity-RFT configs that need a system outside rft: an environment server (ALFWorld, WebShop,
 * SciWorld), the AgentScope, RM-Gallery, OpenJudge or Data-Juicer Python libraries, a
 * vision-language model, Megatron, Tinker, an external model or judge API, Label Studio, or a
 * Python class of Trinity's examples/ folder (its plugins). `checkOutsideSystems` finds the first
 * such need in a raw config tree, before interpolation and any other check, so such a config
 * stops at once with one line naming what it needs, and not on a missing path first.
 */

import { ConfigError } from "./config_error.ts";
import type { ConfigNode } from "./config_tree.ts";
import { REWARD_FUNCTIONS, WORKFLOWS } from "../workflow/mod.ts";
import { knownNames } from "../util/registry.ts";
import { isTrinityName } from "./trinity_names.ts";
import { trinityComponentStatus } from "./trinity_registry.ts";
import { EXPERIENCE_OPERATORS } from "../buffer/operators/mod.ts";

const ALFWORLD = "the ALFWorld environment (a Python text-game server)";
const AGENTSCOPE = "the AgentScope agent library (Python)";
const VLM = "a vision-language model (rft trains text-only models)";
const JUDGE_API = "the OpenJudge library (Python) and an external judge API";

/** Trinity's workflows that need an outside system, and the system. */
export const OUTSIDE_WORKFLOWS: Readonly<Record<string, string>> = {
  alfworld_workflow: ALFWORLD,
  RAFT_alfworld_workflow: ALFWORLD,
  RAFT_reflect_alfworld_workflow: ALFWORLD,
  step_wise_alfworld_workflow: ALFWORLD,
  sciworld_workflow: "the SciWorld environment (a Python and Java simulator)",
  webshop_workflow: "the WebShop environment (a Python web-shop server)",
  agentscope_workflow_adapter: AGENTSCOPE,
  agentscope_workflow_adapter_v1: AGENTSCOPE,
  agentscope_react_workflow: AGENTSCOPE,
  agentscope_react_math_workflow: AGENTSCOPE,
  as_react_workflow: AGENTSCOPE,
  agentscopev0_react_math_workflow: AGENTSCOPE,
  agentscope_v1_react_search_workflow: AGENTSCOPE,
  email_search_workflow: `${AGENTSCOPE} with its email-search tools`,
  simple_mm_workflow: VLM,
  async_simple_mm_workflow: VLM,
  rubric_judge_openai_workflow: "an external judge API (an OpenAI-compatible service)",
  intercode_sql_workflow: "InterCode's SQL environment (a Docker container)",
};

/** Trinity's Connect-the-Dots research package: its workflows, advantage fn and operators. */
export const COD =
  "Trinity's Connect-the-Dots (CoD) research package (Python: its task packing, hint workflows and returns)";

/** Whether `name` is a workflow of Trinity's Connect-the-Dots research package. */
export function isCodWorkflow(name: string): boolean {
  return /^cod_\w+_workflow$/.test(name) || name.includes(".connect_the_dots.");
}

/** Trinity's reward fns that need an outside system (later releases), and the system. */
export const OUTSIDE_REWARDS: Readonly<Record<string, string>> = {
  openjudge_reward: JUDGE_API,
  trajectory_accuracy_grader_reward: JUDGE_API,
  openjudge_trajectory_accuracy_reward: JUDGE_API,
  openjudge_multi_grader_reward: JUDGE_API,
};

/** Trinity's experience operators that need an outside system, and the system. */
export const OUTSIDE_OPERATORS: Readonly<Record<string, string>> = {
  data_juicer: "the Data-Juicer service (Python; its LLM scoring operators call a model API)",
  cod_advantage_fn: COD,
  cod_overwrite_reward_with_returns: COD,
};

/** A found need: the node that names it and what to say. */
interface Need {
  node: ConfigNode;
  message: string;
}

/** The child `key` of a mapping node. */
function child(node: ConfigNode | undefined, key: string): ConfigNode | undefined {
  return node?.kind === "map" ? node.entries.get(key) : undefined;
}

/** The scalar text of a node. */
function text(node: ConfigNode | undefined): string | undefined {
  return node?.kind === "scalar" && typeof node.value === "string" ? node.value : undefined;
}

/** The items of a list node. */
function items(node: ConfigNode | undefined): ConfigNode[] {
  return node?.kind === "list" ? node.items : [];
}

/**
 * Why rft cannot run component `name` of `registry` (a workflow or reward fn name the config
 * gives): a system outside rft (the tables above; a dotted `examples.` path, or a name that
 * neither rft nor Trinity registers, which only a Python plugin of Trinity's examples can
 * give), or Trinity's name that rft has not built; undefined when rft has it, or when it is a
 * near miss of one of rft's names (the registry's did-you-mean then says more).
 */
function componentNeed(
  registry: "workflow" | "reward_fn",
  name: string,
): string | undefined {
  const table = registry === "workflow" ? OUTSIDE_WORKFLOWS : OUTSIDE_REWARDS;
  const rft = registry === "workflow" ? WORKFLOWS : REWARD_FUNCTIONS;
  if (table[name]) return `needs ${table[name]}, which rft does not run`;
  if (registry === "workflow" && isCodWorkflow(name)) return `needs ${COD}, which rft does not run`;
  if (rft.has(name) || name === "") return undefined;
  if (isTrinityName(registry, name)) {
    return `names Trinity's ${registry} "${name}", which rft has not built: ${
      trinityComponentStatus(registry, name).note
    }`;
  }
  if (!name.startsWith("examples.") && knownNames(name, rft.names()).includes("Did you mean")) {
    return undefined;
  }
  if (name.startsWith("examples.")) {
    return `needs a Python class from Trinity's examples/ folder (${name}), which rft does not ` +
      "run; a TypeScript plugin in plugins/ can port it";
  }
  return `names no registered ${registry} ("${name}"; known: ${rft.names().join(", ")}): ` +
    "only a plugin registers it (in a Trinity config, a Python class from Trinity's examples/ " +
    "folder, which rft does not run; a TypeScript plugin in plugins/ can port it)";
}

/** The tasksets of a stage's `buffer.explorer_input`. */
function tasksetsOf(input: ConfigNode | undefined): ConfigNode[] {
  return [
    child(input, "taskset"),
    ...items(child(input, "tasksets")),
    ...items(child(input, "eval_tasksets")),
  ].filter((t): t is ConfigNode => t !== undefined);
}

/** The first outside need of one stage (or the top level) `root`. */
function stageNeed(root: ConfigNode): Need | undefined {
  const needs: (Need | undefined)[] = [];
  const add = (node: ConfigNode | undefined, system: string | undefined) => {
    if (node && system) needs.push({ node, message: `needs ${system}, which rft does not run` });
  };
  const addComponent = (node: ConfigNode | undefined, registry: "workflow" | "reward_fn") => {
    const message = componentNeed(registry, text(node) ?? "");
    if (node && message) needs.push({ node, message });
  };
  const model = child(root, "model");
  const enabled = (n: ConfigNode | undefined) => {
    const e = child(n, "enable");
    return e?.kind === "scalar" && e.value === true ? e : undefined;
  };
  add(enabled(child(model, "tinker")), "Tinker (Thinking Machines' training service)");
  add(enabled(child(model, "external_model")), "an external model API (OpenAI-compatible)");
  const trainer = child(root, "trainer");
  add(megatron(trainer), "Megatron-LM (a Python training backend)");
  const advantageFn = child(child(root, "algorithm"), "advantage_fn");
  if (text(advantageFn) === "cod") add(advantageFn, COD);
  const processor = child(root, "data_processor");
  const taskPipeline = child(processor, "task_pipeline");
  if (items(child(taskPipeline, "operators")).length) {
    const ops = items(child(taskPipeline, "operators")).map((o) => text(child(o, "name")) ?? "");
    add(
      taskPipeline,
      ops.includes("human_preference_annotation_mapper")
        ? "Label Studio (human annotation, through Data-Juicer's service)"
        : `the Data-Juicer service (Python) running ${ops.join(", ")}`,
    );
  }
  for (const op of items(child(child(processor, "experience_pipeline"), "operators"))) {
    const name = text(child(op, "name")) ?? "";
    if (!EXPERIENCE_OPERATORS.has(name)) add(op, OUTSIDE_OPERATORS[name]);
  }
  const input = child(child(root, "buffer"), "explorer_input");
  for (const node of [input, ...tasksetsOf(input)]) {
    addComponent(child(node, "default_workflow_type"), "workflow");
    addComponent(child(node, "default_reward_fn_type"), "reward_fn");
  }
  addComponent(child(input, "default_eval_workflow_type"), "workflow");
  return needs[0];
}

/** The node asking for Megatron under `trainer` (`trainer_strategy`, or a `strategy` key). */
function megatron(trainer: ConfigNode | undefined): ConfigNode | undefined {
  const strategy = child(trainer, "trainer_strategy");
  if (text(strategy) === "megatron") return strategy;
  const search = (node: ConfigNode | undefined): ConfigNode | undefined => {
    if (node?.kind === "list") return node.items.map(search).find((n) => n);
    if (node?.kind !== "map") return undefined;
    const own = node.entries.get("strategy");
    if (text(own) === "megatron") return own;
    return [...node.entries.values()].map(search).find((n) => n);
  };
  return search(child(trainer, "trainer_config"));
}

/**
 * Throws a ConfigError naming the outside system the config `root` (a raw tree: stages too)
 * needs, at the key that asks for it. Also refuses a Data-Juicer recipe given as a config.
 */
export function checkOutsideSystems(root: ConfigNode, file: string): void {
  if (root.kind === "map" && child(root, "process") && !child(root, "buffer")) {
    throw new ConfigError(
      file,
      "process",
      "expected a Trinity config, found a Data-Juicer recipe (its process: list), which " +
        "Trinity's data_juicer operator hands to the Data-Juicer service; rft does not run it",
    );
  }
  const stages = items(child(root, "stages"));
  const need = [root, ...stages].map(stageNeed).find((n) => n);
  if (need) throw new ConfigError(need.node.origin.where, need.node.origin.path, need.message);
}

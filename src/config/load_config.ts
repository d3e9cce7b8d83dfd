/**
 * `loadConfig`: a `./rft run` YAML file to a {@link RunConfig}. Reads the file, applies `--set`
 * overrides, resolves `${oc.env:NAME,default}` / `${key.path}` references, maps or drops
 * Trinity-RFT's keys (`trinity_compat.ts`), splits it into stages (each stage
 * deep-merged over the top level), validates every stage against the schema, fills defaults
 * (also those computed from other keys) and checks keys against each other. Every problem is a
 * one-line ConfigError with `file:line` and key path. Does not open models or data.
 *
 * Paths: relative paths (in the file or given with `--set`) resolve against the file's
 * directory; the default `checkpoint_root_dir` is `./runs` in the current working directory
 * (Trinity's convention).
 * A stage sets a key to null to drop what the top level gives it (e.g. `taskset: null`).
 * A taskset's own `default_workflow_type` / `default_reward_fn_type` win over
 * `explorer_input`'s, which fill them in when absent.
 */

import { dirname, resolve } from "node:path";
import { ALGORITHM_TYPE } from "../algorithm/algorithm_type.ts";
import { NotUtf8Error, utf8Text } from "../util/utf8_text.ts";
import { ConfigError } from "./config_error.ts";
import {
  childPath,
  type ConfigNode,
  describeNode,
  mergeTrees,
  type Origin,
  parseConfigTree,
} from "./config_tree.ts";
import { interpolate } from "./interpolate.ts";
import { moveSftExperienceBuffer } from "./sft_dataset_key.ts";
import { translateTrinityKeys } from "./trinity_compat.ts";
import { checkOutsideSystems } from "./trinity_outside.ts";
import { applyOverrides, isTrinityOverride } from "./overrides.ts";
import { type DerivedContext, withDerivedDefaults } from "./derived_defaults.ts";
import { exploredTasksets, type RunConfig, type StageConfig } from "./run_config.ts";
import { CONFIG_SCHEMA, STAGE_SCHEMA } from "./schema.ts";
import { checkKnownKeys, resolveSection } from "./validate.ts";

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** `--set` overrides as `key.path=value`, applied in order before interpolation. */
  overrides?: readonly string[];
  /** Environment for `${NAME}`; default: the process environment. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** A stage's name and its tree (the top level merged with the stage's keys). */
interface StageTree {
  name: string;
  tree: ConfigNode;
  /** Whether it is an entry of `stages` (not the whole config). */
  staged: boolean;
}

/**
 * Loads, validates and resolves the config `file`. Throws a ConfigError (one line) on any
 * problem: a missing file, invalid YAML, an unset variable, a bad override, an unknown key, a
 * wrong type or range, a missing model or data path, duplicate stage names.
 *
 * @example
 * ```ts
 * const config = await loadConfig("examples/addition/config.yaml", {
 *   overrides: ["algorithm.optimizer.lr=2e-5"],
 * });
 * console.log(config.stages.map((s) => s.stageName)); // ["sft", "grpo"]
 * ```
 */
export async function loadConfig(
  file: string,
  options: LoadConfigOptions = {},
): Promise<RunConfig> {
  const absolute = resolve(file);
  let text: string;
  try {
    text = utf8Text(await Deno.readFile(absolute));
  } catch (err) {
    if (err instanceof NotUtf8Error) {
      throw new ConfigError(`${file}:${err.line}`, undefined, `a YAML config: ${err.message}`);
    }
    const found = err instanceof Deno.errors.NotFound ? "no such file" : (err as Error).message;
    throw new ConfigError(file, undefined, `expected a readable YAML config file, found ${found}`);
  }
  const env = options.env;
  const lookup = env ? (name: string) => env[name] : (name: string) => Deno.env.get(name);
  const parsed = parseConfigTree(text, (line) => `${file}:${line}`);
  checkOutsideSystems(parsed, file);
  const overrides = options.overrides ?? [];
  // Trinity keys on the command line are translated after the config's own keys, so they win.
  const trinity = overrides.filter((o) => isTrinityOverride(o, CONFIG_SCHEMA));
  const own = overrides.filter((o) => !trinity.includes(o));
  const tree = interpolate(applyOverrides(parsed, own, CONFIG_SCHEMA), lookup);
  const root: ConfigNode = tree.kind === "scalar" && tree.value === null
    ? { kind: "map", entries: new Map(), origin: tree.origin }
    : tree;
  if (root.kind !== "map") {
    throw new ConfigError(
      root.origin.where,
      "config",
      `expected a mapping, found ${describeNode(root)}`,
    );
  }
  const configDir = dirname(absolute);
  const { ignored, notes } = translateTrinityKeys(root, CONFIG_SCHEMA, { configDir });
  const overridden = translateTrinityKeys(
    applyOverrides(root, trinity, CONFIG_SCHEMA) as typeof root,
    CONFIG_SCHEMA,
    { overriding: true, configDir },
  );
  const stages = stageTrees(root).map((s) =>
    moveSftExperienceBuffer(s.staged ? { ...s, tree: overrideStage(s.tree, overrides) } : s)
  );
  const context = { cwd: Deno.cwd(), env: lookup };
  return {
    file: absolute,
    stages: stages.map((s, i) => resolveStaged(s, i, configDir, context)),
    ignoredTrinityKeys: [...new Set([...ignored, ...overridden.ignored])],
    notes: [...notes, ...overridden.notes],
  };
}

/**
 * A stage's tree with the overrides of shared keys applied again: the command line is last, so
 * it wins over the stage's own values too (Trinity keys translated over them).
 */
function overrideStage(tree: ConfigNode, overrides: readonly string[]): ConfigNode {
  const shared = overrides.filter((o) => !/^\s*stages\s*[[.=]/.test(o));
  const trinity = shared.filter((o) => isTrinityOverride(o, STAGE_SCHEMA));
  const own = shared.filter((o) => !trinity.includes(o));
  const overridden = applyOverrides(applyOverrides(tree, own, STAGE_SCHEMA), trinity, STAGE_SCHEMA);
  if (overridden.kind === "map") {
    translateTrinityKeys(overridden, STAGE_SCHEMA, { overriding: true });
  }
  return overridden;
}

/** {@link resolveStage}; an override's error in a stage names the stage (`stages[i].key`). */
function resolveStaged(
  s: StageTree,
  index: number,
  configDir: string,
  context: DerivedContext,
): StageConfig {
  try {
    return resolveStage(s, configDir, context);
  } catch (err) {
    const overridden = err instanceof ConfigError && err.where.startsWith("--set") &&
      err.keyPath !== undefined && !err.keyPath.startsWith("stages");
    if (!s.staged || !overridden) throw err;
    throw new ConfigError(err.where, `stages[${index}].${err.keyPath}`, err.detail);
  }
}

/** The stages of `root`: its `stages` merged over the rest, or the rest alone as "main". */
function stageTrees(root: ConfigNode & { kind: "map" }): StageTree[] {
  checkKnownKeys(root.entries, Object.keys(CONFIG_SCHEMA.fields));
  const top = new Map(root.entries);
  const stages = top.get("stages");
  top.delete("stages");
  const base: ConfigNode = { ...root, entries: top };
  if (stages === undefined || (stages.kind === "scalar" && stages.value === null)) {
    return [{ name: "main", tree: base, staged: false }];
  }
  const fail = (at: Origin, detail: string): never => {
    throw new ConfigError(at.where, at.path, detail);
  };
  if (stages.kind !== "list") {
    fail(stages.origin, `expected a list of stages, found ${describeNode(stages)}`);
  }
  const items = (stages as ConfigNode & { kind: "list" }).items;
  if (items.length === 0) fail(stages.origin, "expected at least one stage, found an empty list");
  const firstAt = new Map<string, string>();
  return items.map((item) => {
    if (item.kind !== "map") {
      return fail(item.origin, `expected a mapping, found ${describeNode(item)}`);
    }
    const nameNode = item.entries.get("stage_name");
    const nameAt = nameNode?.origin ??
      { where: item.origin.where, path: childPath(item.origin.path, "stage_name") };
    const name = nameNode?.kind === "scalar" ? nameNode.value : undefined;
    if (typeof name !== "string" || name === "") {
      fail(
        nameAt,
        `expected a non-empty string, found ${nameNode ? describeNode(nameNode) : "nothing"}`,
      );
    }
    const first = firstAt.get(name as string);
    if (first !== undefined) {
      fail(
        nameAt,
        `expected a unique stage name, found ${JSON.stringify(name)} again (first at ${first})`,
      );
    }
    firstAt.set(name as string, nameAt.path);
    const entries = new Map(item.entries);
    entries.delete("stage_name");
    return { name: name as string, tree: mergeTrees(base, { ...item, entries }), staged: true };
  });
}

/** One stage validated, with every default filled and its keys checked against each other. */
function resolveStage(
  { name, tree }: StageTree,
  configDir: string,
  context: DerivedContext,
): StageConfig {
  const validated = resolveSection(STAGE_SCHEMA.fields, tree, tree.origin, configDir);
  const input = validated.buffer.explorerInput;
  if (input.taskset !== undefined && input.tasksets.length > 0) {
    const at = nearest(tree, ["buffer", "explorer_input", "tasksets"]);
    throw new ConfigError(
      at.where,
      at.path,
      "expected either taskset or tasksets, found both (list the first taskset in tasksets)",
    );
  }
  const stage = withDerivedDefaults({ stageName: name, ...validated }, context);
  checkStage(stage, tree);
  return stage;
}

/** Checks across keys: the data each mode and algorithm needs, unique eval taskset names. */
function checkStage(stage: StageConfig, tree: ConfigNode): void {
  checkStageData(stage, tree);
  const { explorerInput } = stage.buffer;
  const explored = exploredTasksets(explorerInput);
  for (const key of ["tasksets", "eval_tasksets"] as const) {
    const seen = new Set<string>();
    const list = key === "tasksets" ? explorerInput.tasksets : explorerInput.evalTasksets;
    list.forEach((taskset, i) => {
      if (seen.has(taskset.name)) {
        const at = nearest(tree, ["buffer", "explorer_input", key, i]);
        throw new ConfigError(
          at.where,
          at.path,
          `expected ${key.replace("_", " ")} with unique names, found ${
            JSON.stringify(taskset.name)
          } twice (set name)`,
        );
      }
      seen.add(taskset.name);
    });
  }
  explored.forEach((taskset, i) => {
    const args = JSON.stringify(taskset.rewardFnArgs);
    if (args !== JSON.stringify(explored[0].rewardFnArgs)) {
      const at = nearest(tree, ["buffer", "explorer_input", "tasksets", i, "reward_fn_args"]);
      throw new ConfigError(
        at.where,
        at.path,
        `expected the reward_fn_args of tasksets[0] (one set per stage), found ${args}`,
      );
    }
    const requires = taskset.lesson?.requires;
    const named = explored.some((t) => t.name === requires && t !== taskset);
    if (requires !== undefined && !named) {
      const at = nearest(tree, ["buffer", "explorer_input", "tasksets", i, "lesson", "requires"]);
      throw new ConfigError(
        at.where,
        at.path,
        `expected the name of another taskset of tasksets (${
          explored.map((t) => t.name).join(", ")
        }), found ${JSON.stringify(requires)}`,
      );
    }
  });
}

/** Checks that a stage has the data its mode and algorithm read. */
function checkStageData(stage: StageConfig, tree: ConfigNode): void {
  const { algorithmType } = stage.algorithm;
  const type = ALGORITHM_TYPE.get(algorithmType);
  const missing = (keys: string[], what: string, why: string): never => {
    const at = nearest(tree, keys);
    throw new ConfigError(at.where, at.path, `expected ${what} (${why}), found nothing`);
  };
  const trains = stage.mode === "both" || stage.mode === "train";
  const explores = stage.mode === "both" || stage.mode === "explore";
  const { explorerInput, trainerInput } = stage.buffer;
  if (
    trains && (type.schema !== "experience" || algorithmType === "mix") &&
    !trainerInput.sftWarmupDataset
  ) {
    missing(
      ["buffer", "trainer_input", "sft_warmup_dataset"],
      "a dataset section",
      `algorithm_type "${algorithmType}" trains on it`,
    );
  }
  // Mode explore explores whatever the algorithm (a cluster's explorer skips a stage that trains
  // on a dataset); mode both only for one that learns from rollouts.
  const explorer = type.schema === "experience" ||
    (stage.mode === "explore" && stage.cluster.backend === "none");
  if (explores && explorer && exploredTasksets(explorerInput).length === 0) {
    missing(
      ["buffer", "explorer_input", "taskset"],
      "a taskset section",
      `mode "${stage.mode}" explores it`,
    );
  }
  if (stage.mode === "bench" && explorerInput.evalTasksets.length === 0) {
    missing(
      ["buffer", "explorer_input", "eval_tasksets"],
      "a list of eval tasksets",
      'mode "bench" evaluates the checkpoints on them',
    );
  }
}

/** Where the node at `keys` is, or its nearest written ancestor with the full key path. */
function nearest(tree: ConfigNode, keys: readonly (string | number)[]): Origin {
  let node = tree;
  let rest = [...keys];
  while (rest.length > 0) {
    const [key] = rest;
    const next = node.kind === "map" && typeof key === "string"
      ? node.entries.get(key)
      : node.kind === "list" && typeof key === "number"
      ? node.items[key]
      : undefined;
    if (next === undefined) break;
    node = next;
    rest = rest.slice(1);
  }
  const path = rest.reduce<string>(
    (p, k) => typeof k === "number" ? `${p}[${k}]` : childPath(p, k),
    node.origin.path,
  );
  return { where: node.origin.where, path };
}

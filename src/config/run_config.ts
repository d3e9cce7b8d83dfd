/**
 * The loaded run configuration: what `./rft run config.yaml` runs, after YAML parsing,
 * `${ENV:default}` interpolation, `--set` overrides, validation and defaults (see
 * `load_config.ts`). Every type here is the schema's (`schema.ts`, through `ConfigOf`): YAML
 * keys are Trinity-RFT's snake_case, here camelCase (`buffer.explorer_input.default_workflow_type`
 * -> `buffer.explorerInput.defaultWorkflowType`); component `*_args` mappings keep their YAML keys
 * (they are passed to registries as they are). Types only, and one helper.
 */

import type { ConfigOf } from "./schema_fields.ts";
import type { STAGE_SCHEMA, TASKSET_SCHEMA } from "./schema.ts";

/** Everything of a run except `stages` (one stage after loading). */
export type StageConfig = { stageName: string } & ConfigOf<typeof STAGE_SCHEMA>;

/** A stage as validated against the schema, before the loader fills its derived keys. */
export type StageInput = { stageName: string } & ConfigOf<typeof STAGE_SCHEMA, "input">;

/** What a run does (`mode`). */
export type RunMode = StageConfig["mode"];

/** `algorithm`: the algorithm type and its components. */
export type AlgorithmSection = StageConfig["algorithm"];

/** `model.lora_configs[]`. */
export type LoraConfigSection = StageConfig["model"]["loraConfigs"][number];

/** One taskset (`buffer.explorer_input.taskset`, an entry of `tasksets` or `eval_tasksets`). */
export type TasksetSection = ConfigOf<typeof TASKSET_SCHEMA>;

/** `buffer.explorer_input`. */
export type ExplorerInputSection = StageConfig["buffer"]["explorerInput"];

/**
 * A loaded config: its stages in order, each complete (a stage's keys override the top-level
 * ones; later stages start from the previous stage's last checkpoint). A config without
 * `stages` has one stage named "main".
 */
export interface RunConfig {
  /** The config file read (absolute), for messages. */
  file: string;
  stages: StageConfig[];
  /** Trinity-RFT keys with no meaning in rft that the file sets, each once (one warning line). */
  ignoredTrinityKeys: string[];
  /** Other warnings of the loader (a Trinity value replaced by rft's), one line each. */
  notes: string[];
}

/** The tasksets the explorer draws from: `taskset` as a list of one, else `tasksets`. */
export function exploredTasksets<T>(input: { taskset?: T; tasksets: T[] }): T[] {
  return input.taskset ? [input.taskset] : input.tasksets;
}

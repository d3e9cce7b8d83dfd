/**
 * A resolved config written back as YAML (snake_case keys, every default spelled out, paths
 * absolute), for the run directory and for `--print-config`-style inspection. `loadConfig`
 * reads it back to the same stages. Does not write files.
 */

import { stringify } from "yaml";
import type { RunConfig, StageConfig } from "./run_config.ts";
import { type FieldSchema, STAGE_SCHEMA } from "./schema.ts";
import { camelCase } from "./schema_fields.ts";

/**
 * `config` as YAML: the stage's keys at the top level for a single stage named "main", else a
 * `stages` list of complete stages. Literal `${` in strings is written `$${`.
 *
 * @example
 * ```ts
 * import { loadConfig } from "./load_config.ts";
 * const config = await loadConfig("examples/addition/config.yaml");
 * console.log(resolvedConfigYaml(config)); // stage_name: sft ... stage_name: grpo
 * ```
 */
export function resolvedConfigYaml(config: RunConfig): string {
  const stages = config.stages.map(stageYaml);
  const single = config.stages.length === 1 && config.stages[0].stageName === "main";
  const body = single ? stages[0] : {
    stages: stages.map((s, i) => ({ stage_name: config.stages[i].stageName, ...s })),
  };
  return `# Resolved from ${config.file}\n` + stringify(body, { lineWidth: 0 });
}

/** One stage's keys in YAML form. */
function stageYaml(stage: StageConfig): Record<string, unknown> {
  return toYaml(STAGE_SCHEMA, stage) as Record<string, unknown>;
}

/** `value` of `field` with snake_case keys and escaped `${`. */
function toYaml(field: FieldSchema, value: unknown): unknown {
  switch (field.type) {
    case "section": {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(field.fields)) {
        const v = (value as Record<string, unknown>)[camelCase(key)];
        if (v !== undefined) out[key] = toYaml(child, v);
      }
      return out;
    }
    case "list":
      return (value as unknown[]).map((item) => toYaml(field.of, item));
    default:
      return escapeReferences(value);
  }
}

/** `value` with `${` in every string (nested too) written as `$${`. */
function escapeReferences(value: unknown): unknown {
  if (typeof value === "string") return value.replaceAll("${", () => "$${");
  if (Array.isArray(value)) return value.map(escapeReferences);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, escapeReferences(v)]));
  }
  return value;
}

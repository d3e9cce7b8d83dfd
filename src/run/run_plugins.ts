/**
 * Plugin loading: every `*.ts` file of each plugin directory is imported (in name order) before
 * the config is validated, so the workflows, reward fns, algorithms and operators it registers
 * through the public API (`mod.ts`, importable as "rft") are known to the config. Reports what
 * each file registered by comparing the registries before and after its import.
 */

import { ADVANTAGE_FN } from "../algorithm/advantage/mod.ts";
import { ALGORITHM_TYPE } from "../algorithm/algorithm_type.ts";
import { ENTROPY_LOSS_FN } from "../algorithm/entropy.ts";
import { KL_FN } from "../algorithm/kl.ts";
import { POLICY_LOSS_FN } from "../algorithm/policy_loss/mod.ts";
import type { Registry } from "../util/registry.ts";
import { SAMPLE_STRATEGY } from "../algorithm/sample_strategy.ts";
import { EXPERIENCE_OPERATORS } from "../buffer/operators/mod.ts";
import { TASK_SELECTORS } from "../buffer/selectors/mod.ts";
import { REWARD_FUNCTIONS, WORKFLOWS } from "../workflow/mod.ts";
import { InputError, oneLineMessage } from "../util/input_error.ts";
import { resolve } from "node:path";
import { TOOL_CALL_PARSERS } from "../tool_calls/mod.ts";
import { MONITORS } from "../monitor/monitor_registry.ts";
import { pathToFileURL } from "node:url";

/** The registries a plugin may add to, by what the log calls their entries. */
const REGISTRIES: [string, Registry<unknown>][] = [
  ["workflow", WORKFLOWS],
  ["reward fn", REWARD_FUNCTIONS],
  ["algorithm", ALGORITHM_TYPE],
  ["advantage fn", ADVANTAGE_FN],
  ["policy loss fn", POLICY_LOSS_FN],
  ["KL fn", KL_FN],
  ["entropy loss fn", ENTROPY_LOSS_FN],
  ["sample strategy", SAMPLE_STRATEGY],
  ["operator", EXPERIENCE_OPERATORS],
  ["task selector", TASK_SELECTORS],
  ["tool call parser", TOOL_CALL_PARSERS],
  ["monitor", MONITORS],
] as [string, Registry<unknown>][];

/** What one plugin file registered. */
export interface LoadedPlugin {
  file: string;
  /** E.g. `workflow "my_workflow"`. */
  registered: string[];
}

/**
 * A plugin that failed to load: one line naming the file and the cause (its first line, with
 * the place Deno points at, e.g. a syntax error's `file:line:column`; no code frame, no colour).
 */
export class PluginError extends InputError {
  constructor(readonly file: string, cause: unknown) {
    super(`Cannot load plugin ${file}: ${oneLineMessage(cause)}`, { cause });
    this.name = "PluginError";
  }
}

/**
 * Imports every `*.ts` file of `dirs` (a missing directory is skipped when `optional`, else an
 * error; a directory named twice is read once) and returns what each registered.
 */
export async function loadPlugins(
  dirs: readonly { path: string; optional: boolean }[],
): Promise<LoadedPlugin[]> {
  const loaded: LoadedPlugin[] = [];
  const seen = new Set<string>();
  for (const { path, optional } of dirs) {
    if (seen.has(resolve(path))) continue;
    seen.add(resolve(path));
    let names: string[];
    try {
      names = (await Array.fromAsync(Deno.readDir(path)))
        .filter((e) => e.isFile && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts"))
        .map((e) => e.name)
        .sort();
    } catch (err) {
      if (optional && err instanceof Deno.errors.NotFound) continue;
      throw new PluginError(
        path,
        new Error(`cannot read the plugin directory: ${(err as Error).message}`),
      );
    }
    for (const name of names) {
      const file = resolve(path, name);
      const before = snapshot();
      try {
        await import(pathToFileURL(file).href);
      } catch (err) {
        throw new PluginError(file, err);
      }
      const after = snapshot();
      const registered: string[] = [];
      for (const [kind, names] of after) {
        const old = before.get(kind)!;
        for (const n of names) if (!old.has(n)) registered.push(`${kind} "${n}"`);
      }
      loaded.push({ file, registered });
    }
  }
  return loaded;
}

function snapshot(): Map<string, Set<string>> {
  return new Map(REGISTRIES.map(([kind, registry]) => [kind, new Set(registry.names())]));
}

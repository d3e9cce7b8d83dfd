/**
 * Whether a served model was trained without its chat template: a checkpoint inside an rft run
 * directory whose resolved `config.yaml` says `use_chat_template: false` for its tasksets. Such a
 * model answers plain prompts (`/v1/completions`) as its run evaluated it, while
 * `/v1/chat/completions` wraps messages in a template it never saw (the addition example's chat
 * answer `221` against the completion's `77`), so `rft serve` says so when it starts.
 */

import { dirname } from "node:path";
import { parse } from "yaml";

/** How many directories above the model `config.yaml` may be (step_N, checkpoints, stage, run). */
const LEVELS = 4;

/** Every `workflow_args.use_chat_template` value in a parsed config, in any stage or taskset. */
function chatTemplateFlags(value: unknown): boolean[] {
  if (Array.isArray(value)) return value.flatMap(chatTemplateFlags);
  if (typeof value !== "object" || value === null) return [];
  const record = value as Record<string, unknown>;
  const own = (record.workflow_args as Record<string, unknown> | undefined)?.use_chat_template;
  return [
    ...(typeof own === "boolean" ? [own] : []),
    ...Object.entries(record).filter(([k]) => k !== "workflow_args").flatMap(([, v]) =>
      chatTemplateFlags(v)
    ),
  ];
}

/** The run config above `modelDir` that trained without the chat template, if there is one. */
export async function plainPromptRunConfig(modelDir: string): Promise<string | undefined> {
  let dir = modelDir;
  for (let level = 0; level < LEVELS; level++) {
    dir = dirname(dir);
    const path = `${dir}/config.yaml`;
    let text: string;
    try {
      text = await Deno.readTextFile(path);
    } catch {
      continue;
    }
    try {
      const flags = chatTemplateFlags(parse(text));
      return flags.length > 0 && flags.every((f) => !f) ? path : undefined;
    } catch {
      return undefined; // not a config rft wrote
    }
  }
  return undefined;
}

/** The note `rft serve` prints for a model trained on plain prompts (see the file comment). */
export function plainPromptNote(id: string, configPath: string): string {
  return `note: "${id}" was trained on plain prompts (use_chat_template: false in ${configPath}): ` +
    "/v1/completions answers a prompt as the run evaluated it; /v1/chat/completions wraps the " +
    "messages in the chat template, which this model never saw, and answers differently";
}

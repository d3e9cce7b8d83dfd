/**
 * A model trained on plain prompts is told apart by its run's config.yaml, so that `rft serve`
 * and `rft generate --chat` warn that the chat template is new to it.
 */

import { stringify } from "yaml";
import { assertEquals } from "../_asserts.ts";
import { plainPromptNote, plainPromptRunConfig } from "../../src/cli/chat_template_note.ts";

/** A run directory `<root>/run` with `config` as its config.yaml and one stage's checkpoint. */
async function runWith(root: string, config: unknown): Promise<string> {
  const checkpoint = `${root}/run/grpo/checkpoints/step_3`;
  await Deno.mkdir(checkpoint, { recursive: true });
  await Deno.writeTextFile(`${root}/run/config.yaml`, stringify(config));
  return checkpoint;
}

const taskset = (use: boolean | undefined) => ({
  path: "t.jsonl",
  ...(use === undefined ? {} : { workflow_args: { use_chat_template: use } }),
});

Deno.test("a checkpoint of a run whose tasksets say use_chat_template: false was trained on plain prompts", async () => {
  const root = await Deno.makeTempDir();
  try {
    const plain = {
      stages: [{
        stage_name: "grpo",
        buffer: { explorer_input: { taskset: taskset(false), eval_tasksets: [taskset(false)] } },
      }],
    };
    const checkpoint = await runWith(root, plain);
    assertEquals(await plainPromptRunConfig(checkpoint), `${root}/run/config.yaml`);
    assertEquals(
      plainPromptNote("m", "c.yaml").startsWith(
        'note: "m" was trained on plain prompts (use_chat_template: false in c.yaml)',
      ),
      true,
    );
    const chat = { buffer: { explorer_input: { taskset: taskset(true) } } };
    assertEquals(await plainPromptRunConfig(await runWith(root, chat)), undefined);
    const unsaid = { buffer: { explorer_input: { taskset: taskset(undefined) } } };
    assertEquals(await plainPromptRunConfig(await runWith(root, unsaid)), undefined);
    // A model directory outside any run.
    await Deno.mkdir(`${root}/hf`);
    assertEquals(await plainPromptRunConfig(`${root}/hf`), undefined);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

/**
 * SFT rows of a chat dataset (Trinity's `experience_buffer` with `prompt_type: messages`): no
 * response key is needed, and a bad row is reported once, at load, by its file line, never
 * when it would be drawn.
 */

import { loadConfig } from "../../src/config/load_config.ts";
import { loadTokenizer } from "../../src/model/tokenizer.ts";
import { datasetSource } from "../../src/buffer/dataset_source.ts";
import { assertEquals } from "../_asserts.ts";
import { inTempDir } from "../_temp_dir.ts";
import { writeQwenConfigAndTokenizer } from "../trinity/_tiny_qwen.ts";

const chat = (question: string, answer?: string) => ({
  messages: [
    { role: "user", content: question },
    ...(answer === undefined ? [] : [{ role: "assistant", content: answer }]),
  ],
});

Deno.test("sft chat rows: no response key; a bad row is reported once by its file line", async () => {
  await inTempDir("rft-sft-rows-", async (dir) => {
    await writeQwenConfigAndTokenizer(`${dir}/model`);
    const data = `${dir}/sft.jsonl`;
    const rows = [chat("1+1?", "2"), chat("no answer"), "not json", chat("2+2?", "4")];
    await Deno.writeTextFile(
      data,
      rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r)) + "\n").join(""),
    );
    await Deno.writeTextFile(
      `${dir}/config.yaml`,
      `mode: train
model: {model_path: model}
algorithm: {algorithm_type: sft}
buffer:
  trainer_input:
    experience_buffer:
      storage_type: file
      path: sft.jsonl
      format: {prompt_type: messages, messages_key: messages}
`,
    );
    const [stage] = (await loadConfig(`${dir}/config.yaml`)).stages;
    const log: string[] = [];
    const source = await datasetSource(stage.buffer.trainerInput.sftWarmupDataset!, {
      algorithm: "sft",
      tokenizer: await loadTokenizer(`${dir}/model`),
      maxTokens: 512,
      totalEpochs: 3,
      seed: stage.seed,
      log: (line) => log.push(line),
    });
    let experiences = 0;
    let skipped = 0;
    const next = () => source.next(2, { policyVersion: 0 });
    for (let batch = await next(); batch; batch = await next()) {
      experiences += batch.batch.length;
      skipped += batch.skipped ?? 0;
      for (const exp of batch.batch) {
        // Qwen3's template writes an empty thinking block before the last assistant turn.
        const answer = exp.responseText?.replace("<think>\n\n</think>\n\n", "");
        assertEquals(answer === "2" || answer === "4", true, exp.responseText);
      }
    }
    // The two bad rows count once, with the first batch.
    assertEquals([experiences, skipped], [2 * 3, 2]);
    assertEquals(log.length, 2, log.join("\n"));
    assertEquals(
      log[0],
      `skipped ${data} line 2: its chat does not end with an assistant turn after a prompt`,
    );
    assertEquals(log[1].startsWith(`skipped ${data} line 3: `), true, log[1]);
  });
});

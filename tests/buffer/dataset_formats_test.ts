/**
 * Dataset formats Trinity's examples bring: `.json` files (a JSON array, or JSON Lines under a
 * `.json` name), a Hub dataset folder whose README.md `configs: data_files` names its files
 * (paths, lists, globs, a mapping of splits), and prompts given as a list of chat turns.
 */

import { Taskset, type TasksetConfig } from "../../src/buffer/taskset.ts";
import { taskMessages, taskPrompt } from "../../src/buffer/task.ts";
import { assertEquals, assertRejects } from "../_asserts.ts";
import { inTempDir } from "../_temp_dir.ts";

const config = (path: string, more: Partial<TasksetConfig> = {}): TasksetConfig => ({
  path,
  format: { promptKey: "prompt", responseKey: "answer" },
  defaultWorkflowType: "math_workflow",
  ...more,
});

const rows = (n: number, tag = "q") =>
  Array.from({ length: n }, (_, i) => ({ prompt: `${tag}${i}`, answer: String(i) }));

Deno.test("a .json dataset is a JSON array or JSON Lines; rows are placed by row or line", async () => {
  await inTempDir("rft-json-", async (dir) => {
    await Deno.writeTextFile(`${dir}/array.json`, JSON.stringify([...rows(2), { answer: "x" }]));
    const array = await Taskset.open(config(`${dir}/array.json`));
    assertEquals(array.rows.map((r) => r.prompt), ["q0", "q1"]);
    assertEquals(array.skippedRows.map((w) => w.row), [2]);
    const lines = rows(3).map((r) => JSON.stringify(r)).join("\n");
    await Deno.writeTextFile(`${dir}/lines.json`, `${lines}\nnot json\n`);
    const jsonl = await Taskset.open(config(`${dir}/lines.json`));
    assertEquals(jsonl.size, 3);
    assertEquals(jsonl.skippedRows.map((w) => w.line), [4]);
    await Deno.writeTextFile(`${dir}/broken.json`, "[{");
    await assertRejects(
      () => Taskset.open(config(`${dir}/broken.json`)),
      Error,
      "not a valid JSON array",
    );
    // A folder of <split>.json files.
    await Deno.mkdir(`${dir}/folder`);
    await Deno.writeTextFile(`${dir}/folder/test.json`, JSON.stringify(rows(1, "t")));
    const split = await Taskset.open(config(`${dir}/folder`, { split: "test" }));
    assertEquals(split.rows.map((r) => r.prompt), ["t0"]);
  });
});

Deno.test("a README's configs data_files name the files of each split and config", async () => {
  await inTempDir("rft-readme-", async (dir) => {
    const readme = [
      "---",
      "configs:",
      "- config_name: default",
      "  data_files:",
      "  - split: train",
      "    path: data.json",
      "  - split: test",
      "    path: [held/a.json, held/b.json]",
      "- config_name: extra",
      "  data_files:",
      "    train: shards/**/part-*.json",
      "---",
      "# A dataset",
    ].join("\n");
    await Deno.writeTextFile(`${dir}/README.md`, readme);
    await Deno.writeTextFile(`${dir}/data.json`, JSON.stringify(rows(2)));
    await Deno.mkdir(`${dir}/held`);
    await Deno.writeTextFile(`${dir}/held/a.json`, JSON.stringify(rows(1, "a")));
    await Deno.writeTextFile(`${dir}/held/b.json`, JSON.stringify(rows(1, "b")));
    await Deno.mkdir(`${dir}/shards/x`, { recursive: true });
    await Deno.writeTextFile(`${dir}/shards/x/part-1.json`, JSON.stringify(rows(1, "s")));
    assertEquals((await Taskset.open(config(dir))).size, 2);
    const test = await Taskset.open(config(dir, { split: "test" }));
    assertEquals(test.rows.map((r) => r.prompt), ["a0", "b0"]);
    const extra = await Taskset.open(config(dir, { subsetName: "extra" }));
    assertEquals(extra.rows.map((r) => r.prompt), ["s0"]);
    await assertRejects(
      () => Taskset.open(config(dir, { split: "validation" })),
      Error,
      'its README.md names splits train, test of config "default"; expected "validation" (split)',
    );
    await assertRejects(
      () => Taskset.open(config(dir, { subsetName: "main" })),
      Error,
      'its README.md names configs default, extra; expected "main" (subset_name)',
    );
  });
});

Deno.test("a prompt given as chat turns is the task's chat; its text is the last user turn", () => {
  const chat = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "2 + 2?" },
    { role: "assistant", content: "4" },
    { role: "user", content: "And 3 + 3?" },
  ];
  const task = {
    rawTask: { prompt: chat },
    formatArgs: { promptKey: "prompt", systemPrompt: "x" },
  };
  assertEquals(taskMessages(task), chat, "a chat opening with a system turn keeps it");
  assertEquals(taskPrompt(task), "And 3 + 3?");
  const plain = {
    rawTask: { prompt: chat.slice(1, 2) },
    formatArgs: { promptKey: "prompt", systemPrompt: "x" },
  };
  assertEquals(taskMessages(plain), [{ role: "system", content: "x" }, chat[1]]);
});

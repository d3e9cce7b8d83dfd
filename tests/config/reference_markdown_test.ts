import {
  configDocsMarkdown,
  configReferenceMarkdown,
  trinityKeysMarkdown,
} from "../../src/config/reference_markdown.ts";
import { assertEquals } from "../_asserts.ts";

Deno.test("configReferenceMarkdown: one row per key with type, default and description", () => {
  const lines = configReferenceMarkdown().trimEnd().split("\n");
  assertEquals(lines[0], "| Key | Type | Default | Description |");
  const row = (key: string) => lines.find((l) => l.startsWith(`| ${key} |`));
  assertEquals(
    row("buffer.explorer_input.taskset.path"),
    "| buffer.explorer_input.taskset.path | path | required | A .jsonl / .parquet file, a dataset directory, a cached Hub id or an `sqlite:///` URL |",
  );
  assertEquals(
    row("algorithm.optimizer.lr"),
    "| algorithm.optimizer.lr | number > 0 | `0.000001` | Learning rate |",
  );
  assertEquals(
    row("buffer.explorer_input.eval_tasksets"),
    "| buffer.explorer_input.eval_tasksets | list of sections like `buffer.explorer_input.taskset` " +
      "| `[]` | Tasksets evaluated every explorer.eval_interval steps |",
  );
  assertEquals(
    row("stages[].stage_name"),
    "| stages[].stage_name | string | required | Unique name of the stage |",
  );
  // Shared parts are listed once: no eval taskset or stage copies of their keys.
  assertEquals(lines.some((l) => l.startsWith("| buffer.explorer_input.eval_tasksets[]")), false);
  assertEquals(lines.some((l) => l.startsWith("| stages[].model")), false);
  // Every row has four cells.
  assertEquals(lines.every((l) => l.split(" | ").length === 4), true);
});

Deno.test("docs/config.md is the current reference table (regenerate: ./rft deno task config-docs)", async () => {
  const doc = await Deno.readTextFile(new URL("../../docs/config.md", import.meta.url));
  assertEquals(doc, configDocsMarkdown());
});

Deno.test("trinityKeysMarkdown: every Trinity key with its status; no key missing", () => {
  const lines = trinityKeysMarkdown().trimEnd().split("\n").slice(2);
  const row = (key: string) => lines.find((l) => l.startsWith(`| ${key} |`));
  assertEquals(
    row("cluster"),
    "| cluster | implemented | Explorers on several machines (mode explore) and one trainer (mode train), over NATS |",
  );
  assertEquals(row("cluster.node_num"), "| cluster.node_num | ignored | Ray cluster layout |");
  assertEquals(
    row("trainer.grad_clip"),
    "| trainer.grad_clip | mapped | Read as `algorithm.optimizer.grad_clip` |",
  );
  assertEquals(
    row("buffer.explorer_input.taskset.subset_name"),
    "| buffer.explorer_input.taskset.subset_name | implemented | Subset (config) folder of a Hub dataset directory |",
  );
  const statuses = new Set(lines.map((l) => l.split(" | ")[1]));
  assertEquals([...statuses].sort(), ["ignored", "implemented", "mapped"]);
});

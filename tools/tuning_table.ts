/**
 * Makes a shipped tuning table (`src/gpu/tuning_tables/`) from autotune cache files: the entries
 * of one adapter, merged in the order given (later files win), re-keyed from an older adapter key
 * when asked (caches written before the backend was inferred say `.../default`).
 *
 *   ./rft deno run -A tools/tuning_table.ts OUT.json --adapter KEY [--cpu-threads N]
 *     [--from-adapter OLD_KEY] --source "how it was measured" CACHE.json...
 *
 * To refresh the CPU adapter's table: run the example (and `./rft info`) with an empty
 * `RFT_CACHE_DIR` on a quiet machine of that many threads, then feed the cache here.
 */

import { parseArgs } from "node:util";
import type { TuningTable } from "../src/gpu/tuning_tables.ts";

const { values, positionals } = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: {
    adapter: { type: "string" },
    "from-adapter": { type: "string" },
    "cpu-threads": { type: "string" },
    source: { type: "string" },
  },
});
const [out, ...caches] = positionals;
if (!out || !values.adapter || !values.source || caches.length === 0) {
  console.error("usage: tools/tuning_table.ts OUT.json --adapter KEY --source TEXT CACHE.json...");
  Deno.exit(2);
}
const adapter = values.adapter;
const from = values["from-adapter"] ?? adapter;
const table: TuningTable = {
  version: 1,
  adapter,
  ...(values["cpu-threads"] ? { cpuThreads: Number(values["cpu-threads"]) } : {}),
  source: values.source,
  entries: {},
};
for (const path of caches) {
  const cache = JSON.parse(await Deno.readTextFile(path)) as Pick<TuningTable, "entries">;
  for (const entry of Object.values(cache.entries)) {
    if (entry.adapter !== from && entry.adapter !== adapter) continue;
    table.entries[`${adapter}|${entry.op}|${entry.shapeClass}`] = { ...entry, adapter };
  }
}
await Deno.writeTextFile(out, JSON.stringify(table, null, 2) + "\n");
console.log(`${out}: ${Object.keys(table.entries).length} choices for ${adapter}`);

/** bench/gpu/acceptance.ts: issue 48's table from bench reports and the suite log. */

import { acceptanceMarkdown, acceptanceRows } from "../../bench/gpu/acceptance.ts";
import { assertEquals } from "../_asserts.ts";

const TRAIN = {
  matmul: { size: 1024, before: { gflops: 20000 }, after: { gflops: 25000 } },
  results: [{ model: "smollm2-135m", rows: 8, len: 256, modelGflops: 12000 }],
};
const DECODE = {
  decode: [
    {
      model: "smollm2-135m",
      batch: 1,
      rft: 510,
      ortNode: 300,
      dispatchesPerStep: 305,
      sameTokens: { ortNode: 1 },
    },
    {
      model: "smollm2-135m",
      batch: 32,
      rft: 5000,
      ortNode: 900,
      dispatchesPerStep: 305,
      sameTokens: { ortNode: 0.97 },
    },
  ],
};
const MATMUL = { matmul: [{ size: 2048, variant: "tiled_8x8", rft: 36000, rftF16: 30000 }] };
const LOG = "features     shader-f16 no, timestamp-query yes, subgroups no\n" +
  "features     shader-f16 yes, timestamp-query yes, subgroups yes\n";

Deno.test("acceptance rows: ratios against the better matmul rate, targets per batch", () => {
  const rows = acceptanceRows({ train: TRAIN, decode: DECODE, matmul: MATMUL, log: LOG });
  assertEquals(rows.map((r) => [r.value, r.met]), [
    ["0.480", false], // 12000 / 25000
    ["510", true],
    ["1.000", true],
    ["305 (10.2)", false], // 30 layers
    ["5000", false],
    ["0.970", false],
    ["36.0", true],
    ["30.0", undefined],
    ["yes", undefined], // the last features line: the backend the steps ran on
  ]);
});

Deno.test("acceptance rows: a report that is missing reads 'not measured'", () => {
  const md = acceptanceMarkdown(acceptanceRows({ matmul: MATMUL }));
  const lines = md.split("\n");
  assertEquals(
    lines[2],
    "| train step, model FLOPs / rft's matmul rate | - | >= 0.50 | not measured |",
  );
  assertEquals(lines[3], "| decode batch 1, tokens/s | - | >= 500 | not measured |");
  assertEquals(
    lines.at(-1),
    "| subgroups granted and its probe kernel right (rft info) | - | say which | not measured |",
  );
});

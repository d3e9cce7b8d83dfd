import { parquetWriteBuffer } from "hyparquet-writer";
import {
  type Experience,
  experienceFromRow,
  experienceToRow,
  newEid,
  validateExperience,
} from "../../src/buffer/experience.ts";
import {
  appendExperiencesJsonl,
  readExperienceDir,
  readExperiencePart,
  readExperiencesJsonl,
  writeExperiencePart,
} from "../../src/buffer/experience_io.ts";
import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";
import { inTempDir } from "../_temp_dir.ts";

/** A 3-token prompt and a 4-token response with awkward floats and unicode text. */
function fullExperience(runId = 0): Experience {
  return {
    tokens: [101, 7, 2 ** 31 - 1, 0, 55, 56, 2],
    promptLength: 3,
    actionMask: [0, 0, 0, 1, 1, 0, 1],
    logprobs: [0, 0, 0, -1e-300, -Math.PI, 0, -5e-324],
    reward: 0.1 + 0.2,
    advantages: [0, 0, 0, 1 / 3, -1 / 3, 0, 1.7976931348623157e308],
    returns: [0, 0, 0, 0.5, 0.5, 0, 0.5],
    referenceLogprobs: [0, 0, 0, -2.5, -0.125, -7, -1e-10],
    teacherLogprobs: [0, 0, 0, -1.5, -0.25, -3, -0.5],
    info: { taskId: "0.3", runId, policyVersion: 12, eid: newEid("0.3", runId) },
    metrics: { accuracy: 1, "format_score ✓": -0.25 },
    isEval: false,
    promptText: "Solve: 2+2= ? 数学 \u05e9\u05dc\u05d5\u05dd e\u0301 🧮",
    responseText: "4 ✅ \u0000 end",
  };
}

/** Only the required fields, a null reward and an empty response. */
function minimalExperience(): Experience {
  return {
    tokens: [5, 6],
    promptLength: 2,
    actionMask: [0, 0],
    logprobs: [0, 0],
    reward: null,
    info: { taskId: "1.0", runId: 3, policyVersion: 0, eid: "1.0/3/x" },
  };
}

Deno.test("experience: validation names the field, the expected value and what was found", () => {
  validateExperience(fullExperience());
  validateExperience(minimalExperience());
  const cases: [Partial<Experience>, string][] = [
    [{ tokens: [] }, `"tokens" is []; expected a non-empty array of token ids`],
    [{ tokens: [1, -2] }, `"tokens" [1] is -2; expected an integer in [0, 2147483647]`],
    [{ promptLength: 3 }, `"promptLength" is 3; expected an integer in [0, 2]`],
    [{ actionMask: [0] }, `"actionMask" has 1 entries; expected 2 (one per token)`],
    [{ actionMask: [0, 2] }, `"actionMask" [1] is 2; expected 0 or 1`],
    [{ actionMask: [0, 1] }, `"actionMask" [1] is 1 inside the prompt (promptLength 2)`],
    [{ logprobs: [0, -0.5] }, `"logprobs" [1] is -0.5 where actionMask is 0; expected 0`],
    [{ logprobs: [0, NaN] }, `"logprobs" [1] is NaN; expected a finite number`],
    [{ reward: Infinity }, `"reward" is Infinity; expected a finite number or null`],
    [{ advantages: [0, 0, 0] }, `"advantages" has 3 entries; expected 2 (one per token)`],
    [{ metrics: { acc: "1" as unknown as number } }, `"metrics.acc" is "1"; expected a finite`],
    [{ promptText: 3 as unknown as string }, `"promptText" is 3; expected a string`],
  ];
  for (const [change, message] of cases) {
    assertThrows(
      () => validateExperience({ ...minimalExperience(), ...change }, "in test"),
      Error,
      `Invalid experience in test: ${message}`,
    );
  }
  const info = { ...minimalExperience().info, runId: -1 };
  assertThrows(
    () => validateExperience({ ...minimalExperience(), info }),
    Error,
    `"info.runId" is -1; expected an integer in [0, 2147483647]`,
  );
});

Deno.test("experience: the flat row has snake_case keys and converts back unchanged", () => {
  const exp = fullExperience();
  const row = experienceToRow(exp);
  assertEquals(Object.keys(row), [
    "tokens",
    "prompt_length",
    "action_mask",
    "logprobs",
    "reward",
    "advantages",
    "returns",
    "reference_logprobs",
    "teacher_logprobs",
    "task_id",
    "run_id",
    "policy_version",
    "eid",
    "metrics",
    "is_eval",
    "prompt_text",
    "response_text",
  ]);
  assertEquals(experienceFromRow(row, "row"), exp);
  const minimal = experienceToRow(minimalExperience());
  assertEquals([minimal.advantages, minimal.is_eval, minimal.metrics], [null, null, null]);
  assertEquals(experienceFromRow(minimal, "row"), minimalExperience(), "absent stays absent");
  const { eid: _, ...noEid } = minimal;
  assertThrows(
    () => experienceFromRow(noEid, "f.jsonl line 4"),
    Error,
    `f.jsonl line 4: column "eid" is missing`,
  );
});

Deno.test("experience io: a parquet part round-trips exactly (floats, unicode, nulls, -0)", async () => {
  await inTempDir("rft-experience-", async (dir) => {
    const withNegativeZero = {
      ...fullExperience(1),
      logprobs: [0, 0, 0, -0, -1, -0, -2],
      reward: -0,
    };
    const experiences = [fullExperience(0), minimalExperience(), withNegativeZero];
    const path = await writeExperiencePart(dir, experiences);
    assertEquals(/\/part-\d{13}-[0-9a-f-]{36}\.parquet$/.test(path), true, path);
    const back = await readExperiencePart(path);
    assertEquals(back, experiences);
    assertEquals(Object.is(back[2].logprobs[3], -0), true, "-0 survives parquet");
    assertEquals(Object.is(back[2].reward, -0), true, "-0 survives parquet");
    assertEquals([...Deno.readDirSync(dir)].length, 1, "no temporary file is left behind");
  });
});

Deno.test("experience io: a part is written whole or not at all", async () => {
  await inTempDir("rft-experience-", async (dir) => {
    const bad = { ...minimalExperience(), actionMask: [0] };
    await assertRejects(
      () => writeExperiencePart(dir, [minimalExperience(), bad]),
      Error,
      `Invalid experience #1 (1.0/3/x) to be written to ${dir}/part-`,
    );
    await assertRejects(() => writeExperiencePart(dir, []), Error, "no experiences");
    await assertRejects(
      () => writeExperiencePart(dir, [minimalExperience()], "rows.parquet"),
      Error,
      `Cannot write ${dir}/rows.parquet: the name must look like "part-<id>.parquet"`,
    );
    await assertRejects(
      () => writeExperiencePart(`${dir}/missing`, [minimalExperience()], "part-1.parquet"),
      Error,
      `Cannot write ${dir}/missing/part-1.parquet:`,
    );
    assertEquals([...Deno.readDirSync(dir)], [], "nothing was written");
  });
});

Deno.test("experience io: a crash mid-write leaves earlier parts readable and is reported", async () => {
  await inTempDir("rft-experience-", async (dir) => {
    const first = [fullExperience(0), fullExperience(1)];
    const second = [minimalExperience()];
    await writeExperiencePart(dir, first, "part-0001.parquet");
    await writeExperiencePart(dir, second, "part-0002.parquet");
    const whole = await Deno.readFile(`${dir}/part-0001.parquet`);
    // A writer killed before its rename leaves its temporary file; a copy cut short stands in
    // for a part truncated by a disk failure; neither may yield a row.
    await Deno.writeFile(`${dir}/part-0003.parquet.1234.tmp`, whole.subarray(0, 100));
    await Deno.writeFile(`${dir}/part-0004.parquet`, whole.subarray(0, whole.length - 9));
    await Deno.writeFile(`${dir}/part-0005.parquet`, new Uint8Array(0));
    const read = await readExperienceDir(dir);
    assertEquals(read.experiences, [...first, ...second]);
    assertEquals(read.parts, [`${dir}/part-0001.parquet`, `${dir}/part-0002.parquet`]);
    assertEquals(read.warnings.map((w) => w.path), [
      `${dir}/part-0003.parquet.1234.tmp`,
      `${dir}/part-0004.parquet`,
      `${dir}/part-0005.parquet`,
    ]);
    assertEquals(read.warnings[0].reason.includes("temporary file of an unfinished write"), true);
    assertEquals(
      read.warnings[1].reason.startsWith(`part skipped: Cannot read parquet file ${dir}/part-0004`),
      true,
      read.warnings[1].reason,
    );
  });
});

Deno.test("experience io: a part with one invalid row is skipped whole, naming the row", async () => {
  await inTempDir("rft-experience-", async (dir) => {
    // Written by another tool: list columns auto-typed as JSON, and row 1 has a short mask.
    const rows = [experienceToRow(minimalExperience()), {
      ...experienceToRow(minimalExperience()),
      action_mask: [0],
    }];
    const columns = Object.keys(rows[0]) as (keyof typeof rows[0])[];
    const bytes = parquetWriteBuffer({
      columnData: columns.map((name) => ({ name, data: rows.map((r) => r[name]) })),
    });
    await Deno.writeFile(`${dir}/part-foreign.parquet`, new Uint8Array(bytes));
    const read = await readExperienceDir(dir);
    assertEquals([read.experiences, read.parts], [[], []]);
    assertEquals(read.warnings.length, 1);
    assertEquals(
      read.warnings[0].reason.includes(
        `Invalid experience ${dir}/part-foreign.parquet row 1: "actionMask" has 1 entries`,
      ),
      true,
      read.warnings[0].reason,
    );
  });
});

Deno.test("experience io: JSONL round-trips exactly and survives a torn last line", async () => {
  await inTempDir("rft-experience-", async (dir) => {
    const path = `${dir}/experiences.jsonl`;
    const batches = [[fullExperience(0), minimalExperience()], [fullExperience(1)]];
    await appendExperiencesJsonl(path, batches[0]);
    assertEquals(await readExperiencesJsonl(path), { experiences: batches[0], warnings: [] });
    // A writer killed mid-append leaves half a line without its newline (line 3).
    const line = JSON.stringify(experienceToRow(fullExperience(2)));
    await Deno.writeTextFile(path, line.slice(0, line.length / 2), { append: true });
    await appendExperiencesJsonl(path, batches[1]);
    const read = await readExperiencesJsonl(path);
    assertEquals(read.experiences, [...batches[0], ...batches[1]]);
    assertEquals(read.warnings.length, 1);
    assertEquals([read.warnings[0].path, read.warnings[0].line], [path, 3]);
    assertEquals(read.warnings[0].reason.startsWith("not valid JSON:"), true);
  });
});

Deno.test("experience io: a JSONL line that is not a valid experience is skipped and named", async () => {
  await inTempDir("rft-experience-", async (dir) => {
    const path = `${dir}/experiences.jsonl`;
    const good = minimalExperience();
    const bad = { ...experienceToRow(good), reward: "high" };
    await Deno.writeTextFile(
      path,
      [JSON.stringify(experienceToRow(good)), "", JSON.stringify(bad), "[1]"].join("\n") + "\n",
    );
    const read = await readExperiencesJsonl(path);
    assertEquals(read.experiences, [good]);
    assertEquals(read.warnings, [
      {
        path,
        line: 3,
        reason:
          `Invalid experience ${path} line 3: "reward" is "high"; expected a finite number or null`,
      },
      {
        path,
        line: 4,
        reason: `Invalid experience ${path} line 4: row is [1]; expected an object`,
      },
    ]);
  });
});

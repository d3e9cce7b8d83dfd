/**
 * Tasksets read from an SQLite table (Trinity's `storage_type: sql`): Trinity's layout (`id`,
 * `raw_task` JSON) and a table of plain columns, read in id order with the format keys; a bad
 * `raw_task` skipped by its row id; a missing table one InputError listing the tables; a Trinity
 * config naming `sqlite:///tasks.db` (relative to the config) loads and passes preflight.
 */

import { DatabaseSync } from "node:sqlite";
import { readSqliteRows, sqliteFile } from "../../src/buffer/sqlite_rows.ts";
import { Taskset } from "../../src/buffer/taskset.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { checkStages } from "../../src/run/run_preflight.ts";
import { tasksetConfig } from "../../src/run/stage_tasksets.ts";
import { InputError } from "../../src/util/input_error.ts";
import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";
import { inTempDir } from "../_temp_dir.ts";
import { withFixture } from "../run/_fixture.ts";

/** Writes `file` with a Trinity task table `table` holding `rawTasks` (JSON text) in order. */
function writeTrinityTable(file: string, table: string, rawTasks: readonly string[]): void {
  const db = new DatabaseSync(file);
  try {
    db.exec(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY AUTOINCREMENT, raw_task JSON NOT NULL)`);
    const insert = db.prepare(`INSERT INTO ${table} (raw_task) VALUES (?)`);
    for (const raw of rawTasks) insert.run(raw);
  } finally {
    db.close();
  }
}

Deno.test("sqlite taskset: Trinity's id / raw_task table in id order, a bad row skipped by id", async () => {
  await inTempDir("rft-sqlite-", async (dir) => {
    const rows = [
      JSON.stringify({ question: "1+1=", answer: 2 }),
      "{not json",
      JSON.stringify({ question: "2+3=", answer: "5" }),
      JSON.stringify({ answer: "7" }),
    ];
    writeTrinityTable(`${dir}/tasks.db`, "gsm8k", rows);
    const taskset = await Taskset.open({
      path: `sqlite:///${dir}/tasks.db`,
      table: "gsm8k",
      format: { promptKey: "question", responseKey: "answer" },
      defaultWorkflowType: "math_workflow",
    });
    assertEquals(taskset.files, [`${dir}/tasks.db`]);
    assertEquals(taskset.rows, [{ question: "1+1=", answer: 2 }, {
      question: "2+3=",
      answer: "5",
    }]);
    assertEquals(taskset.rowOrigins, [
      `${dir}/tasks.db table gsm8k row 1`,
      `${dir}/tasks.db table gsm8k row 3`,
    ]);
    assertEquals(taskset.skippedRows.map((w) => [w.path, w.row]), [
      [`${dir}/tasks.db table gsm8k`, 2],
      [`${dir}/tasks.db table gsm8k`, 4],
    ]);
    assertEquals(taskset.skippedRows[0].reason.startsWith("raw_task is not valid JSON"), true);
    assertEquals(
      taskset.skippedRows[1].reason,
      'Task row has no "question" (prompt_key); its keys are "answer"',
    );
    const [first] = taskset.nextBatch(1)!;
    assertEquals([first.rawTask, first.formatArgs.promptKey], [taskset.rows[0], "question"]);
  });
});

Deno.test("sqlite taskset: a table of plain columns gives each row's columns as its object", async () => {
  await inTempDir("rft-sqlite-", (dir) => {
    const db = new DatabaseSync(`${dir}/plain.db`);
    db.exec("CREATE TABLE sums (prompt TEXT, answer INTEGER)");
    db.exec("INSERT INTO sums VALUES ('4+4=', 8), ('1+2=', 3)");
    db.close();
    assertEquals(readSqliteRows(`sqlite:///${dir}/plain.db`, "sums"), [
      { id: 1, ok: true, value: { prompt: "4+4=", answer: 8 } },
      { id: 2, ok: true, value: { prompt: "1+2=", answer: 3 } },
    ]);
    return Promise.resolve();
  });
});

Deno.test("sqlite taskset: a missing table, a missing file and no table name are InputErrors", async () => {
  await inTempDir("rft-sqlite-", async (dir) => {
    writeTrinityTable(`${dir}/tasks.db`, "train", ["{}"]);
    assertThrows(
      () => readSqliteRows(`sqlite:///${dir}/tasks.db`, "test"),
      InputError,
      `Cannot read sqlite table "test" of ${dir}/tasks.db: no such table; expected the ` +
        `taskset's name, found tables "train"`,
    );
    assertThrows(
      () => readSqliteRows(`sqlite:///${dir}/none.db`, "train"),
      InputError,
      `Cannot read sqlite table "train" of ${dir}/none.db: `,
    );
    await assertRejects(
      () => Taskset.open({ path: `sqlite:///${dir}/tasks.db`, defaultWorkflowType: "w" }),
      InputError,
      `Cannot open taskset sqlite:///${dir}/tasks.db: expected the name of its table`,
    );
    assertEquals(sqliteFile("sqlite:///rel/t.db", "/base"), "/base/rel/t.db");
    assertEquals(sqliteFile("sqlite:////abs/t.db", "/base"), "/abs/t.db");
  });
});

Deno.test("sqlite taskset: a Trinity config with storage_type sql loads, passes preflight, opens", async () => {
  await withFixture(async (f) => {
    const sums = [["1+2=", "3"], ["4+4=", "8"], ["2+5=", "7"]];
    writeTrinityTable(
      `${f.dir}/tasks.db`,
      "sums",
      sums.map(([prompt, answer]) => JSON.stringify({ prompt, answer })),
    );
    const file = await f.writeConfig({
      buffer: {
        explorer_input: {
          taskset: { name: "sums", storage_type: "sql", path: "sqlite:///tasks.db" },
        },
      },
    }, "sql.yaml");
    const config = await loadConfig(file);
    const [stage] = config.stages;
    const section = stage.buffer.explorerInput.taskset!;
    assertEquals(section.path, `sqlite:///${f.dir}/tasks.db`);
    const lines: string[] = [];
    await checkStages(config, (line) => lines.push(line));
    assertEquals(lines, []);
    const taskset = await Taskset.open(tasksetConfig(stage, section, false));
    assertEquals(taskset.rows.map((r) => [r.prompt, r.answer]), sums);
  });
});

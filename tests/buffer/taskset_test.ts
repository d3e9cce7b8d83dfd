import { parquetWriteBuffer } from "hyparquet-writer";
import { hubCacheSnapshot } from "../../src/buffer/dataset_files.ts";
import {
  promptEncodingProblem,
  type Task,
  taskAnswer,
  taskMessages,
  taskPrompt,
} from "../../src/buffer/task.ts";
import { loadTokenizer } from "../../src/model/tokenizer.ts";
import { Taskset, type TasksetConfig } from "../../src/buffer/taskset.ts";
import { createSelector } from "../../src/buffer/selectors/mod.ts";
import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";
import { inTempDir } from "../_temp_dir.ts";

/** `count` math rows, `{question, answer}`, numbered from `from`. */
function mathRows(count: number, from = 0): { question: string; answer: string }[] {
  return Array.from({ length: count }, (_, i) => ({
    question: `${from + i}+1= ? ünïcødé 🧮`,
    answer: String(from + i + 1),
  }));
}

/** `count` rows whose questions name `subset`: `"<subset> q<i>"`. */
function subsetRows(count: number, subset: string): { question: string; answer: string }[] {
  return Array.from({ length: count }, (_, i) => ({ question: `${subset} q${i}`, answer: "1" }));
}

async function writeJsonl(path: string, rows: readonly unknown[]): Promise<void> {
  await Deno.writeTextFile(path, rows.map((r) => JSON.stringify(r) + "\n").join(""));
}

async function writeParquet(path: string, rows: readonly { question: string; answer: string }[]) {
  const bytes = parquetWriteBuffer({
    columnData: [
      { name: "question", data: rows.map((r) => r.question), type: "STRING" },
      { name: "answer", data: rows.map((r) => r.answer), type: "STRING" },
      { name: "id", data: BigInt64Array.from(rows, (_, i) => BigInt(i)) },
    ],
  });
  await Deno.writeFile(path, new Uint8Array(bytes));
}

/** The `size` rows epoch `epoch` of `selector` draws (a selector of no feature). */
function drawOrder(selector: string, size: number, seed: number, epoch: number): number[] {
  const context = { size, seed, featureKeys: [], feature: () => [] };
  return createSelector(selector, context).select(epoch * size, size);
}

/** A config reading `path` as math rows. */
function mathConfig(path: string, more: Partial<TasksetConfig> = {}): TasksetConfig {
  return {
    path,
    format: { promptKey: "question", responseKey: "answer" },
    defaultWorkflowType: "math_workflow",
    ...more,
  };
}

/** Every remaining batch of `taskset`, as row indices. */
function drain(taskset: Taskset, batchSize: number): number[][] {
  const batches: number[][] = [];
  for (let b = taskset.nextBatch(batchSize); b !== null; b = taskset.nextBatch(batchSize)) {
    batches.push(b.map((t) => t.index));
  }
  return batches;
}

Deno.test("taskset: a JSONL file gives Trinity-style tasks in row order", async () => {
  await inTempDir("rft-taskset-", async (dir) => {
    await writeJsonl(`${dir}/math.jsonl`, mathRows(3));
    const taskset = await Taskset.open(mathConfig(`${dir}/math.jsonl`, {
      defaultRewardFnType: "math_reward",
      rolloutArgs: { n: 4, temperature: 0.7 },
      workflowArgs: { max_turns: 1 },
    }));
    assertEquals([taskset.size, taskset.files, taskset.skippedRows], [
      3,
      [`${dir}/math.jsonl`],
      [],
    ]);
    const tasks = taskset.nextBatch(2)!;
    const expected: Task = {
      taskId: "0.1",
      index: 1,
      epoch: 0,
      workflow: "math_workflow",
      rewardFn: "math_reward",
      rawTask: mathRows(3)[1],
      formatArgs: { promptKey: "question", responseKey: "answer" },
      rolloutArgs: { n: 4, temperature: 0.7 },
      workflowArgs: { max_turns: 1 },
      isEval: false,
    };
    assertEquals(tasks[1], expected);
    assertEquals(taskPrompt(tasks[1]), "1+1= ? ünïcødé 🧮");
    assertEquals(taskAnswer(tasks[1]), "2");
    assertEquals(taskMessages(tasks[1]), [{ role: "user", content: "1+1= ? ünïcødé 🧮" }]);
    assertThrows(
      () => ((tasks[0].rawTask as Record<string, unknown>).question = "changed"),
      TypeError,
      "read only",
    );
  });
});

Deno.test("taskset: a parquet file reads with INT64 columns as numbers", async () => {
  await inTempDir("rft-taskset-", async (dir) => {
    await writeParquet(`${dir}/math.parquet`, mathRows(4));
    const taskset = await Taskset.open(mathConfig(`${dir}/math.parquet`));
    const tasks = taskset.nextBatch(10)!;
    assertEquals(tasks.map((t) => t.rawTask), mathRows(4).map((r, id) => ({ ...r, id })));
    assertEquals(taskset.nextBatch(1), null);
  });
});

Deno.test("taskset: a HF-style directory is read by split, shards in order", async () => {
  await inTempDir("rft-taskset-", async (dir) => {
    await Deno.mkdir(`${dir}/data`);
    await writeParquet(`${dir}/data/train-00001-of-00002.parquet`, mathRows(2, 10));
    await writeParquet(`${dir}/data/train-00000-of-00002.parquet`, mathRows(3, 0));
    await writeParquet(`${dir}/data/test-00000-of-00001.parquet`, mathRows(1, 100));
    await Deno.writeTextFile(`${dir}/README.md`, "# dataset card\n");
    const train = await Taskset.open(mathConfig(dir));
    assertEquals(train.files, [0, 1].map((i) => `${dir}/data/train-0000${i}-of-00002.parquet`));
    assertEquals(
      train.nextBatch(5)!.map((t) => t.rawTask.question),
      [...mathRows(3, 0), ...mathRows(2, 10)].map((r) => r.question),
    );
    const test = await Taskset.open(mathConfig(dir, { split: "test", isEval: true }));
    const [only] = test.nextBatch(5)!;
    assertEquals([only.rawTask.answer, only.isEval], ["101", true]);

    await writeJsonl(`${dir}/validation.jsonl`, mathRows(2));
    assertEquals((await Taskset.open(mathConfig(dir, { split: "validation" }))).size, 2);
    await writeJsonl(`${dir}/train.jsonl`, mathRows(2));
    await assertRejects(
      () => Taskset.open(mathConfig(dir)),
      Error,
      `split "train" is in more than one layout (${dir}/*.jsonl, ${dir}/data/*.parquet); keep one`,
    );
    await assertRejects(
      () => Taskset.open(mathConfig(dir, { split: "dev" })),
      Error,
      `no file of split "dev" (looked for dev.{json,jsonl,parquet} and dev-*.{json,jsonl,parquet} in ./, data/); found README.md, data/test-00000-of-00001.parquet`,
    );
  });
});

Deno.test("taskset: the Hub layout of huggingface-cli download is picked by subset_name and split", async () => {
  await inTempDir("rft-taskset-", async (dir) => {
    // gsm8k: main/ and socratic/ subsets, a README.md beside.
    await Deno.writeTextFile(`${dir}/README.md`, "# gsm8k\n");
    for (const subset of ["main", "socratic"]) {
      await Deno.mkdir(`${dir}/${subset}`);
      await writeParquet(`${dir}/${subset}/train-00000-of-00002.parquet`, subsetRows(2, subset));
      await writeParquet(`${dir}/${subset}/train-00001-of-00002.parquet`, subsetRows(1, subset));
      await writeParquet(`${dir}/${subset}/test-00000-of-00001.parquet`, subsetRows(3, subset));
    }
    const main = await Taskset.open(mathConfig(dir, { subsetName: "main" }));
    assertEquals(main.files, [
      `${dir}/main/train-00000-of-00002.parquet`,
      `${dir}/main/train-00001-of-00002.parquet`,
    ]);
    assertEquals(main.rows.map((r) => r.question), ["main q0", "main q1", "main q0"]);
    assertEquals(main.rowOrigins, [
      `${dir}/main/train-00000-of-00002.parquet row 0`,
      `${dir}/main/train-00000-of-00002.parquet row 1`,
      `${dir}/main/train-00001-of-00002.parquet row 0`,
    ]);
    const test = await Taskset.open(mathConfig(dir, { subsetName: "socratic", split: "test" }));
    assertEquals(test.rows.map((r) => r.question), ["socratic q0", "socratic q1", "socratic q2"]);
    await assertRejects(
      () => Taskset.open(mathConfig(dir, { subsetName: "main", split: "validation" })),
      Error,
      `no file of split "validation" of subset "main" (looked for validation.{json,jsonl,` +
        `parquet} and validation-*.{json,jsonl,parquet} in main/, main/data/, data/main/)`,
    );
    // A subset named in the config but absent on disk: the split at the top or under data/.
    await Deno.mkdir(`${dir}/flat/data`, { recursive: true });
    await writeJsonl(`${dir}/flat/data/train.jsonl`, mathRows(2));
    assertEquals((await Taskset.open(mathConfig(`${dir}/flat`, { subsetName: "main" }))).size, 2);
  });
});

Deno.test("hubCacheSnapshot: a Hub id is found in HF_HUB_CACHE at refs/main, else not", async () => {
  await inTempDir("rft-hub-", async (dir) => {
    const repo = `${dir}/datasets--openai--gsm8k`;
    await Deno.mkdir(`${repo}/snapshots/abc123/main`, { recursive: true });
    await Deno.mkdir(`${repo}/refs`);
    await Deno.writeTextFile(`${repo}/refs/main`, "abc123");
    const before = Deno.env.get("HF_HUB_CACHE");
    Deno.env.set("HF_HUB_CACHE", dir);
    try {
      assertEquals(hubCacheSnapshot("openai/gsm8k", "datasets"), `${repo}/snapshots/abc123`);
      assertEquals(hubCacheSnapshot("openai/gsm8k", "models"), undefined);
      assertEquals(hubCacheSnapshot("openai/other", "datasets"), undefined);
      assertEquals(hubCacheSnapshot("./openai/gsm8k", "datasets"), undefined);
    } finally {
      if (before === undefined) Deno.env.delete("HF_HUB_CACHE");
      else Deno.env.set("HF_HUB_CACHE", before);
    }
  });
});

Deno.test("taskset: sequential batches run across epochs and end with null", async () => {
  await inTempDir("rft-taskset-", async (dir) => {
    await writeJsonl(`${dir}/math.jsonl`, mathRows(5));
    const taskset = await Taskset.open(mathConfig(`${dir}/math.jsonl`, { totalEpochs: 2 }));
    const batches: Task[][] = [];
    for (let b = taskset.nextBatch(3); b !== null; b = taskset.nextBatch(3)) batches.push(b);
    assertEquals(batches.map((b) => b.map((t) => t.index)), [[0, 1, 2], [3, 4, 0], [1, 2, 3], [
      4,
    ]]);
    assertEquals(batches[1].map((t) => `${t.taskId}@${t.epoch}`), ["0.3@0", "0.4@0", "1.0@1"]);
    assertEquals([taskset.exhausted, taskset.nextBatch(3)], [true, null]);
    assertEquals(taskset.state(), {
      epoch: 2,
      index: 0,
      size: 5,
      selector: "sequential",
      seed: 42,
    });
    assertThrows(() => taskset.nextBatch(0), Error, "Cannot draw a batch of 0 tasks");
  });
});

Deno.test("taskset: shuffle is seeded, a permutation per epoch, different across epochs", () => {
  const a = [0, 1, 2].map((epoch) => drawOrder("shuffle", 50, 7, epoch));
  assertEquals(a, [0, 1, 2].map((epoch) => drawOrder("shuffle", 50, 7, epoch)), "reproducible");
  const sorted = Array.from({ length: 50 }, (_, i) => i);
  for (const order of a) assertEquals([...order].sort((x, y) => x - y), sorted);
  assertEquals(a[0].join() !== sorted.join(), true, "shuffled");
  assertEquals(a[0].join() !== a[1].join() && a[1].join() !== a[2].join(), true, "per epoch");
  assertEquals(a[0].join() !== drawOrder("shuffle", 50, 8, 0).join(), true, "per seed");
  assertEquals(drawOrder("sequential", 4, 7, 3), [0, 1, 2, 3]);
});

Deno.test("taskset: random draws with replacement, seeded", () => {
  const order = drawOrder("random", 50, 7, 0);
  assertEquals(order, drawOrder("random", 50, 7, 0));
  assertEquals(order.length, 50);
  assertEquals(order.every((i) => Number.isInteger(i) && i >= 0 && i < 50), true);
  assertEquals(new Set(order).size < 50, true, "some row is drawn twice");
  assertEquals(order.join() !== drawOrder("random", 50, 7, 1).join(), true, "per epoch");
});

Deno.test("taskset: a restored cursor continues exactly where the saved run stopped", async () => {
  await inTempDir("rft-taskset-", async (dir) => {
    await writeJsonl(`${dir}/math.jsonl`, mathRows(7));
    for (const selector of ["sequential", "shuffle", "random"] as const) {
      const config = mathConfig(`${dir}/math.jsonl`, { selector, totalEpochs: 3, seed: 11 });
      const uninterrupted = drain(await Taskset.open(config), 4);
      const first = await Taskset.open(config);
      const before = [first.nextBatch(4)!, first.nextBatch(4)!].map((b) => b.map((t) => t.index));
      const saved = JSON.parse(JSON.stringify(first.state()));
      assertEquals(saved, { epoch: 1, index: 1, size: 7, selector, seed: 11 });
      const resumed = await Taskset.open(config);
      resumed.restore(saved);
      const after = drain(resumed, 4);
      assertEquals([...before, ...after], uninterrupted, selector);
      assertEquals(after, drain(first, 4), selector);
    }
  });
});

Deno.test("taskset: restore rejects a cursor saved for other data or settings", async () => {
  await inTempDir("rft-taskset-", async (dir) => {
    await writeJsonl(`${dir}/math.jsonl`, mathRows(7));
    const taskset = await Taskset.open(mathConfig(`${dir}/math.jsonl`, { selector: "shuffle" }));
    const state = taskset.state();
    const prefix = `Cannot restore the taskset cursor of ${dir}/math.jsonl:`;
    assertThrows(
      () => taskset.restore({ ...state, seed: 1 }),
      Error,
      `${prefix} it was saved with seed 1; this taskset has 42`,
    );
    assertThrows(
      () => taskset.restore({ ...state, size: 8 }),
      Error,
      `${prefix} it was saved with size 8; this taskset has 7`,
    );
    assertThrows(
      () => taskset.restore({ ...state, index: 7 }),
      Error,
      `${prefix} index is 7; expected an integer in [0, 6] in epoch 0`,
    );
    assertThrows(
      () => taskset.restore({ ...state, epoch: 2 }),
      Error,
      `${prefix} epoch is 2; expected an integer in [0, 1]`,
    );
    taskset.restore({ ...state, epoch: 1 });
    assertEquals(taskset.nextBatch(1), null, "a cursor at the end restores as exhausted");
  });
});

Deno.test("taskset: bad rows are skipped and reported with file and line or row", async () => {
  await inTempDir("rft-taskset-", async (dir) => {
    const path = `${dir}/math.jsonl`;
    await Deno.writeTextFile(
      path,
      [
        JSON.stringify({ question: "1+1=", answer: 2 }),
        `{"question": "torn`,
        JSON.stringify({ prompt: "no question key", answer: "1" }),
        "",
        JSON.stringify({ question: ["not", "text"], answer: "1" }),
        JSON.stringify({ question: "no answer" }),
        JSON.stringify([1, 2]),
        JSON.stringify({ question: "2+2=", answer: "4" }),
      ].join("\n"),
    );
    const taskset = await Taskset.open(mathConfig(path));
    assertEquals(taskset.nextBatch(5)!.map((t) => taskAnswer(t)), ["2", "4"]);
    assertEquals(taskset.skippedRows.map((s) => [s.path, s.line]), [
      [path, 2],
      [path, 3],
      [path, 5],
      [path, 6],
      [path, 7],
    ]);
    assertEquals(taskset.skippedRows[0].reason.startsWith("not valid JSON:"), true);
    assertEquals(taskset.skippedRows.slice(1).map((s) => s.reason), [
      `Task row has no "question" (prompt_key); its keys are "prompt", "answer"`,
      `Task row has "question" (prompt_key) = ["not","text"]; expected a string or a non-empty array of {role, content} strings`,
      `Task row has no "answer" (response_key); its keys are "question"`,
      `row is [1,2]; expected a JSON object`,
    ]);

    const parquetPath = `${dir}/math.parquet`;
    const bytes = parquetWriteBuffer({
      columnData: [
        { name: "question", data: ["a", null, "c"], type: "STRING" },
        { name: "answer", data: ["1", "2", "3"], type: "STRING" },
      ],
    });
    await Deno.writeFile(parquetPath, new Uint8Array(bytes));
    const fromParquet = await Taskset.open(mathConfig(parquetPath));
    assertEquals(fromParquet.size, 2);
    assertEquals(fromParquet.skippedRows, [{
      path: parquetPath,
      row: 1,
      reason:
        `Task row has "question" (prompt_key) = null; expected a string or a non-empty array of {role, content} strings`,
    }]);

    await writeJsonl(`${dir}/empty.jsonl`, [{ prompt: "x" }]);
    await assertRejects(
      () => Taskset.open(mathConfig(`${dir}/empty.jsonl`)),
      Error,
      `Cannot open taskset ${dir}/empty.jsonl: no usable rows in ${dir}/empty.jsonl (1 skipped; first: ${dir}/empty.jsonl line 1: Task row has no "question"`,
    );
  });
});

Deno.test("taskset: messages_key and system_prompt build the chat", async () => {
  await inTempDir("rft-taskset-", async (dir) => {
    const chat = [{ role: "user", content: "hi" }];
    await writeJsonl(`${dir}/chat.jsonl`, [
      { messages: chat },
      { messages: [{ role: "system", content: "own" }, ...chat] },
      { messages: [] },
    ]);
    const taskset = await Taskset.open({
      path: `${dir}/chat.jsonl`,
      format: { messagesKey: "messages", systemPrompt: "Be brief." },
      defaultWorkflowType: "chat",
    });
    const [first, second] = taskset.nextBatch(2)!;
    assertEquals(taskMessages(first), [{ role: "system", content: "Be brief." }, ...chat]);
    assertEquals(taskMessages(second), [{ role: "system", content: "own" }, ...chat]);
    assertEquals(
      taskset.skippedRows[0].reason.endsWith(
        "expected a non-empty array of {role, content} messages (or its JSON text)",
      ),
      true,
    );
    assertThrows(
      () => taskAnswer(first),
      Error,
      `Task "0.0" has no answer: format "response_key" is not set`,
    );
  });
});

Deno.test("taskset: invalid settings are rejected before reading", async () => {
  const config = mathConfig("/nonexistent/x.jsonl");
  await assertRejects(
    () => Taskset.open({ ...config, selector: "fifo" }),
    Error,
    `Unknown task selector "fifo"; known: difficulty_based, offline_easy2hard, random, sequential, shuffle`,
  );
  await assertRejects(
    () => Taskset.open({ ...config, totalEpochs: 0 }),
    Error,
    "totalEpochs is 0; expected an integer >= 1",
  );
  await assertRejects(
    () => Taskset.open(config),
    Error,
    "Cannot open taskset /nonexistent/x.jsonl",
  );
});

Deno.test("taskset: a row whose prompt the tokenizer cannot encode is skipped at load by its line", async () => {
  await inTempDir("rft-taskset-", async (dir) => {
    await Deno.writeTextFile(
      `${dir}/char_tokenizer.json`,
      JSON.stringify({ type: "char", chars: "0123456789+=", special: ["<eos>"] }),
    );
    const tokenizer = await loadTokenizer(dir);
    const path = `${dir}/sums.jsonl`;
    await writeJsonl(path, [{ prompt: "1+1=", answer: "2" }, { prompt: "x+1=", answer: "?" }]);
    const taskset = await Taskset.open({
      path,
      format: { promptKey: "prompt", responseKey: "answer" },
      defaultWorkflowType: "simple_workflow",
      rowCheck: (row, formatArgs) => promptEncodingProblem({ rawTask: row, formatArgs }, tokenizer),
    });
    assertEquals(taskset.size, 1);
    assertEquals(taskset.rowOrigins, [`${path} line 1`]);
    assertEquals(taskset.skippedRows.length, 1);
    const [skipped] = taskset.skippedRows;
    assertEquals([skipped.path, skipped.line], [path, 2]);
    assertEquals(
      skipped.reason.startsWith(
        "the tokenizer cannot encode its prompt: Cannot encode with the " +
          "char tokenizer: character",
      ),
      true,
      skipped.reason,
    );
  });
});

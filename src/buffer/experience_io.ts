/**
 * Experiences on disk: a batch as one parquet "part" file (written to a temporary file, then
 * renamed, so a reader never sees half a part), a directory of parts read back with a counted
 * warning per unreadable part, and JSONL append/read that skips a torn or invalid line. Also the
 * plain JSONL and parquet row readers that tasksets use. Keeps no index of parts and never
 * deletes any: retention and replay belong to the buffer that calls these.
 */

import { writeAtomic } from "../util/write_atomic.ts";
import { parquetReadObjects } from "hyparquet";
import { parquetWriteBuffer, type SchemaElement } from "hyparquet-writer";
import {
  type Experience,
  experienceFromRow,
  type ExperienceRow,
  experienceToRow,
  validateExperience,
} from "./experience.ts";
import { InputError } from "../util/input_error.ts";
import { utf8Text } from "../util/utf8_text.ts";

/** Part files are named `part-<anything>.parquet`. */
const PART_NAME = /^part-[^/\\]+\.parquet$/;
/** A writer's temporary file: the part name plus `.<uuid>.tmp`. */
const TEMP_NAME = /^part-[^/\\]+\.parquet\.[^/\\]+\.tmp$/;

/** Whether directory `dir` holds an experience part (false when there is no such directory). */
export async function hasExperienceParts(dir: string): Promise<boolean> {
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isFile && PART_NAME.test(entry.name)) return true;
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return false;
    }
    throw err;
  }
  return false;
}

/** Something a reader skipped instead of failing: a file, a JSONL line or a parquet row. */
export interface ReadWarning {
  path: string;
  /** 1-based line of a JSONL file. */
  line?: number;
  /** 0-based row of a parquet file. */
  row?: number;
  reason: string;
}

/** What {@link readExperienceDir} found. */
export interface ExperienceDirRead {
  /** Experiences of every readable part, parts in name order, rows in file order. */
  experiences: Experience[];
  /** Paths of the parts read. */
  parts: string[];
  /** One per part skipped or temporary file ignored. */
  warnings: ReadWarning[];
}

/** What {@link readExperiencesJsonl} found. */
export interface ExperienceJsonlRead {
  experiences: Experience[];
  /** One per line skipped (invalid JSON, invalid experience, or a line torn by a crash). */
  warnings: ReadWarning[];
}

/** One line of a JSONL file: its parsed value, or why it could not be parsed. */
export type JsonlLine =
  | { line: number; ok: true; value: unknown }
  | { line: number; ok: false; reason: string };

/** Column kinds of the experience schema. */
type ColumnKind = "int32" | "double" | "string" | "bool" | "json" | "int32[]" | "double[]";

/** The parquet columns of an {@link ExperienceRow}, in file order; `true` = never null. */
const COLUMNS: readonly [keyof ExperienceRow, ColumnKind, boolean][] = [
  ["tokens", "int32[]", true],
  ["prompt_length", "int32", true],
  ["action_mask", "int32[]", true],
  ["logprobs", "double[]", true],
  ["reward", "double", false],
  ["advantages", "double[]", false],
  ["returns", "double[]", false],
  ["reference_logprobs", "double[]", false],
  ["teacher_logprobs", "double[]", false],
  ["task_id", "string", true],
  ["run_id", "int32", true],
  ["policy_version", "int32", true],
  ["eid", "string", true],
  ["metrics", "json", false],
  ["is_eval", "bool", false],
  ["prompt_text", "string", false],
  ["response_text", "string", false],
];

/** The parquet schema of experience parts: list columns are standard 3-level LISTs. */
const SCHEMA: SchemaElement[] = [
  { name: "root", num_children: COLUMNS.length },
  ...COLUMNS.flatMap(([name, kind, required]) => schemaOf(name, kind, required)),
];

function schemaOf(name: string, kind: ColumnKind, required: boolean): SchemaElement[] {
  const repetition_type = required ? "REQUIRED" : "OPTIONAL";
  switch (kind) {
    case "int32":
      return [{ name, type: "INT32", repetition_type }];
    case "double":
      return [{ name, type: "DOUBLE", repetition_type }];
    case "bool":
      return [{ name, type: "BOOLEAN", repetition_type }];
    case "string":
      return [{ name, type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type }];
    case "json":
      return [{ name, type: "BYTE_ARRAY", converted_type: "JSON", repetition_type }];
    case "int32[]":
    case "double[]":
      return [
        { name, repetition_type, converted_type: "LIST", num_children: 1 },
        { name: "list", repetition_type: "REPEATED", num_children: 1 },
        {
          name: "element",
          type: kind === "int32[]" ? "INT32" : "DOUBLE",
          repetition_type: "REQUIRED",
        },
      ];
  }
}

/**
 * Writes `experiences` (validated first) as one part file in `dir` and returns its path. The
 * default name, `part-<ms since epoch>-<uuid>.parquet`, sorts in write order; `name` must match
 * `part-*.parquet`. The part appears whole or not at all.
 */
export async function writeExperiencePart(
  dir: string,
  experiences: readonly Experience[],
  name = `part-${String(Date.now()).padStart(13, "0")}-${crypto.randomUUID()}.parquet`,
): Promise<string> {
  const path = `${dir}/${name}`;
  if (!PART_NAME.test(name)) {
    throw new Error(`Cannot write ${path}: the name must look like "part-<id>.parquet"`);
  }
  if (experiences.length === 0) throw new Error(`Cannot write ${path}: no experiences`);
  const rows = experiences.map((exp, i) =>
    experienceToRow(validateExperience(exp, `#${i} (${exp.info?.eid}) to be written to ${path}`))
  );
  const bytes = parquetWriteBuffer({
    columnData: COLUMNS.map(([column, kind]) => ({
      name: column,
      data: rows.map((r) => r[column]),
      // Dictionaries merge -0 into 0; byte-stream split keeps every double's bits.
      ...(kind.startsWith("double") ? { encoding: "BYTE_STREAM_SPLIT" as const } : {}),
    })),
    schema: SCHEMA,
    createdBy: "rft",
  });
  await writeAtomic(path, [new Uint8Array(bytes)]);
  return path;
}

/** The experiences of one part file; throws naming the file (and row) when it is unreadable. */
export async function readExperiencePart(path: string): Promise<Experience[]> {
  const rows = await readParquetRows(path);
  return rows.map((row, i) => experienceFromRow(row, `${path} row ${i}`));
}

/**
 * Reads every part of `dir` in name order. A part that cannot be read (truncated, corrupt, or
 * holding an invalid row) is skipped whole, and a temporary file of an unfinished write is
 * ignored; each adds a warning instead of failing the read.
 */
export async function readExperienceDir(dir: string): Promise<ExperienceDirRead> {
  const names: string[] = [];
  const warnings: ReadWarning[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isFile) continue;
    if (PART_NAME.test(entry.name)) names.push(entry.name);
    if (TEMP_NAME.test(entry.name)) {
      warnings.push({
        path: `${dir}/${entry.name}`,
        reason: "temporary file of an unfinished write (interrupted or in progress); ignored",
      });
    }
  }
  const result: ExperienceDirRead = { experiences: [], parts: [], warnings };
  for (const name of names.sort()) {
    const path = `${dir}/${name}`;
    try {
      result.experiences.push(...await readExperiencePart(path));
      result.parts.push(path);
    } catch (err) {
      warnings.push({ path, reason: `part skipped: ${(err as Error).message}` });
    }
  }
  return result;
}

/**
 * Appends `experiences` (validated first) to the JSONL file at `path`, one row per line, in one
 * write. If a crash tore the file's last line, a newline is added first so that only the torn
 * line is lost. JSON has no -0: a -0 reads back as 0 (parquet parts keep it).
 */
export async function appendExperiencesJsonl(
  path: string,
  experiences: readonly Experience[],
): Promise<void> {
  const lines = experiences.map((exp, i) =>
    JSON.stringify(
      experienceToRow(
        validateExperience(exp, `#${i} (${exp.info?.eid}) to be appended to ${path}`),
      ),
    ) + "\n"
  );
  const file = await Deno.open(path, { read: true, append: true, create: true });
  try {
    const { size } = await file.stat();
    let text = lines.join("");
    if (size > 0) {
      const last = new Uint8Array(1);
      await file.seek(size - 1, Deno.SeekMode.Start);
      await file.read(last);
      if (last[0] !== 0x0a) text = "\n" + text;
    }
    const bytes = new TextEncoder().encode(text);
    for (let done = 0; done < bytes.length;) done += await file.write(bytes.subarray(done));
  } catch (err) {
    throw new Error(`Cannot append to ${path}: ${(err as Error).message}`);
  } finally {
    file.close();
  }
}

/** The experiences of a JSONL file; a line that is not a valid experience becomes a warning. */
export async function readExperiencesJsonl(path: string): Promise<ExperienceJsonlRead> {
  const result: ExperienceJsonlRead = { experiences: [], warnings: [] };
  for (const entry of await readJsonlLines(path)) {
    try {
      if (!entry.ok) throw new Error(entry.reason);
      result.experiences.push(experienceFromRow(entry.value, `${path} line ${entry.line}`));
    } catch (err) {
      result.warnings.push({ path, line: entry.line, reason: (err as Error).message });
    }
  }
  return result;
}

/** The UTF-8 text of the file at `path`; an InputError naming it when it cannot be read. */
export async function readUtf8(path: string): Promise<string> {
  try {
    return utf8Text(await Deno.readFile(path));
  } catch (err) {
    throw new InputError(`Cannot read ${path}: ${(err as Error).message}`);
  }
}

/** Each non-blank line of the JSONL file at `path`, parsed, with its 1-based line number. */
export async function readJsonlLines(path: string): Promise<JsonlLine[]> {
  return jsonLines(await readUtf8(path));
}

/** Each non-blank line of `text`, parsed, with its 1-based line number. */
export function jsonLines(text: string): JsonlLine[] {
  const lines: JsonlLine[] = [];
  text.split("\n").forEach((raw, i) => {
    if (raw.trim() === "") return;
    try {
      lines.push({ line: i + 1, ok: true, value: JSON.parse(raw) });
    } catch (err) {
      lines.push({ line: i + 1, ok: false, reason: `not valid JSON: ${(err as Error).message}` });
    }
  });
  return lines;
}

/** Every row of the parquet file at `path` as an object keyed by column name. */
export async function readParquetRows(path: string): Promise<Record<string, unknown>[]> {
  try {
    const bytes = await Deno.readFile(path);
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    return await parquetReadObjects({ file });
  } catch (err) {
    throw new InputError(`Cannot read parquet file ${path}: ${(err as Error).message}`);
  }
}

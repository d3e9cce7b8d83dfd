/**
 * The rows of a `.json` dataset file, as Hugging Face's `json` loader reads one: a JSON array
 * of objects, or JSON Lines (one object per line) under a `.json` name. Each row comes with
 * where it is (`line N` of JSON Lines, `row N` of an array, 1-based and 0-based as the other
 * formats count them) or why it could not be parsed.
 */

import { InputError } from "../util/input_error.ts";
import { jsonLines, type JsonlLine, readUtf8 } from "./experience_io.ts";

/** One row of a `.json` file: its place, and its value or why it has none. */
export type JsonRow =
  | JsonlLine
  | { row: number; ok: true; value: unknown };

/** The rows of the `.json` file at `path` (an array, else JSON Lines). */
export async function readJsonRows(path: string): Promise<JsonRow[]> {
  const text = await readUtf8(path);
  if (!text.trimStart().startsWith("[")) return jsonLines(text);
  let rows: unknown;
  try {
    rows = JSON.parse(text);
  } catch (err) {
    throw new InputError(`Cannot read ${path}: not a valid JSON array: ${(err as Error).message}`);
  }
  return (rows as unknown[]).map((value, row) => ({ row, ok: true as const, value }));
}

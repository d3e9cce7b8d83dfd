/**
 * The rows of one table of an SQLite file named by an `sqlite:///path.db` URL (SQLAlchemy's
 * form, which Trinity-RFT's `storage_type: sql` tasksets use), read through `node:sqlite`. In
 * Trinity's layout a table holds `id` and `raw_task` (the row as JSON); a table without
 * `raw_task` gives each row's columns as the row. Reads only; never writes or creates the file.
 */

import { DatabaseSync } from "node:sqlite";
import { isAbsolute, resolve } from "node:path";
import { InputError } from "../util/input_error.ts";

/** The URL scheme of an SQLite path. */
const SQLITE_URL = /^sqlite:\/\/\//;

/** Whether `path` is an `sqlite:///` URL. */
export function isSqliteUrl(path: string): boolean {
  return SQLITE_URL.test(path);
}

/**
 * The file of `url`: `sqlite:///rel.db` is `rel.db` (resolved against `baseDir`),
 * `sqlite:////abs.db` is `/abs.db`, as SQLAlchemy reads them.
 */
export function sqliteFile(url: string, baseDir = Deno.cwd()): string {
  const file = url.replace(SQLITE_URL, "");
  return isAbsolute(file) ? file : resolve(baseDir, file);
}

/** One table row: its object, or why it is not one; `id` is its rowid. */
export type SqliteRow = { id: number; ok: true; value: unknown } | {
  id: number;
  ok: false;
  reason: string;
};

/**
 * The rows of `table` in the file of `url`, in `id` (rowid) order. Throws an InputError naming
 * the file when it cannot be opened or the table is missing (listing the tables it has).
 */
export function readSqliteRows(url: string, table: string): SqliteRow[] {
  const file = sqliteFile(url);
  const fail = (detail: string): never => {
    throw new InputError(`Cannot read sqlite table "${table}" of ${file}: ${detail}`);
  };
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(file, { readOnly: true });
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()
      .map((r) => String(r.name));
    if (!tables.includes(table)) {
      fail(
        `no such table; expected the taskset's name, found tables ${
          tables.length ? tables.map((t) => `"${t}"`).join(", ") : "none"
        }`,
      );
    }
    const quoted = `"${table.replaceAll('"', '""')}"`;
    const columns = db.prepare(`PRAGMA table_info(${quoted})`).all().map((c) => String(c.name));
    const rowid = columns.includes("id") ? "id" : "rowid";
    const records = db.prepare(`SELECT ${rowid} AS _rft_id, * FROM ${quoted} ORDER BY 1`).all();
    return records.map(({ _rft_id, ...record }) => {
      const id = Number(_rft_id);
      if (!columns.includes("raw_task")) return { id, ok: true, value: { ...record } };
      try {
        return { id, ok: true, value: JSON.parse(String(record.raw_task)) };
      } catch (err) {
        return { id, ok: false, reason: `raw_task is not valid JSON: ${(err as Error).message}` };
      }
    });
  } catch (err) {
    if (err instanceof InputError) throw err;
    return fail((err as Error).message);
  } finally {
    db?.close();
  }
}

/**
 * The files of one split of a dataset, as `huggingface-cli download` leaves a Hub dataset on
 * disk: the files its README.md names (`hub_readme.ts`), else by layout:
 * `<subset>/<split>-00000-of-00002.parquet` (gsm8k's `main/`, Mixture-of-Thoughts' `math/`),
 * `data/<split>-*.parquet`, `<split>.jsonl` (or `.json`) at the top. A path that is a file is
 * that file. Also finds a Hub id (`openai/gsm8k`) in the local Hub cache. Lists files only;
 * reading them is `taskset.ts`'s.
 */

import { extname, join } from "node:path";
import { InputError } from "../util/input_error.ts";
import { readmeDataFiles } from "./hub_readme.ts";

/** Extensions of the files a split may be stored in. */
const EXTENSIONS = /\.(jsonl?|parquet)$/;

/**
 * The files of `split` (of `subset`, when given) under `path`, sorted: `path` itself when it
 * is a file, else the `<split>.{jsonl,parquet}` / `<split>-*.{jsonl,parquet}` files of one
 * folder among `<subset>/`, `<subset>/data/`, `data/<subset>/` (or the top and `data/` when
 * there is no subset, or the subset folder is missing). Throws an InputError naming what it
 * looked for and what it found when no file matches, or matches span more than one folder or
 * format.
 */
export async function findSplitFiles(
  path: string,
  split: string,
  subset?: string,
): Promise<string[]> {
  const fail = (detail: string): never => {
    throw new InputError(`Cannot open dataset ${path}: ${detail}`);
  };
  const info = await Deno.stat(path).catch((err: Error) =>
    fail(err instanceof Deno.errors.NotFound ? "no such file or directory" : err.message)
  );
  if (info.isFile) {
    if (!EXTENSIONS.test(path)) {
      fail(
        `expected a .json, .jsonl or .parquet file, found ${
          JSON.stringify(extname(path) || "no extension")
        }`,
      );
    }
    return [path];
  }
  const named = await readmeDataFiles(path, split, subset);
  if (named) return named;
  const escaped = split.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const pattern = new RegExp(`^${escaped}(-[^/\\\\]*)?\\.(jsonl?|parquet)$`);
  const top = ["", "data"];
  const folders = subset === undefined ? top : [subset, join(subset, "data"), join("data", subset)];
  const seen: string[] = [];
  const search = async (candidates: readonly string[]) => {
    const layouts = new Map<string, string[]>();
    for (const folder of candidates) {
      const entries = await Array.fromAsync(Deno.readDir(join(path, folder))).catch(() => []);
      for (const entry of entries) {
        if (!entry.isFile) continue;
        seen.push(join(folder, entry.name));
        const match = pattern.exec(entry.name);
        if (!match) continue;
        const layout = `${join(path, folder, "*")}.${match[2]}`;
        layouts.set(layout, [...(layouts.get(layout) ?? []), join(path, folder, entry.name)]);
      }
    }
    return layouts;
  };
  let layouts = await search(folders);
  const subsetMissing = subset !== undefined &&
    !(await Deno.stat(join(path, subset)).then((s) => s.isDirectory, () => false));
  if (layouts.size === 0 && subsetMissing) layouts = await search(top);
  if (layouts.size === 0) {
    const some = [...new Set(seen)].sort().slice(0, 10).join(", ");
    fail(
      `no file of split "${split}"${subset === undefined ? "" : ` of subset "${subset}"`} ` +
        `(looked for ${split}.{json,jsonl,parquet} and ${split}-*.{json,jsonl,parquet} in ${
          folders.map((f) => `${f || "."}/`).join(", ")
        }); found ${some || "no files"}`,
    );
  }
  if (layouts.size > 1) {
    fail(
      `split "${split}" is in more than one layout (${[...layouts.keys()].join(", ")}); keep one`,
    );
  }
  return [...layouts.values()][0].sort();
}

/**
 * The local copy of Hub repository `id` (`owner/name`) of `kind` in the Hub cache
 * (`$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`): the snapshot named
 * by `refs/main`, else the only snapshot. Undefined when `id` is not an id or not cached.
 */
export function hubCacheSnapshot(id: string, kind: "datasets" | "models"): string | undefined {
  if (!/^[A-Za-z0-9][\w.-]*\/[\w.-]+$/.test(id)) return undefined;
  const home = Deno.env.get("HOME");
  const hfHome = Deno.env.get("HF_HOME") ?? (home ? join(home, ".cache", "huggingface") : "");
  const cache = Deno.env.get("HF_HUB_CACHE") ?? join(hfHome, "hub");
  const repo = join(cache, `${kind}--${id.replace("/", "--")}`);
  let revision: string | undefined;
  try {
    revision = Deno.readTextFileSync(join(repo, "refs", "main")).trim();
  } catch {
    try {
      const snapshots = [...Deno.readDirSync(join(repo, "snapshots"))].filter((e) => e.isDirectory);
      if (snapshots.length === 1) revision = snapshots[0].name;
    } catch {
      return undefined;
    }
  }
  if (revision === undefined) return undefined;
  const snapshot = join(repo, "snapshots", revision);
  try {
    return Deno.statSync(snapshot).isDirectory ? snapshot : undefined;
  } catch {
    return undefined;
  }
}

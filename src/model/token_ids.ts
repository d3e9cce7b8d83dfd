/** The check both tokenizers make of the ids they decode. */

/** Throws naming `tokenizer` when an id of `ids` is negative or not an integer. */
export function checkTokenIds(ids: readonly number[], tokenizer: string): void {
  const bad = ids.find((id) => !Number.isInteger(id) || id < 0);
  if (bad !== undefined) {
    throw new Error(`Cannot decode with ${tokenizer}: token id ${bad} is not a token id`);
  }
}

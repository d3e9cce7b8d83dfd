/** Re-exports of node:assert in the shapes the tests use (JSR's @std/assert is unreachable). */

import assert from "node:assert/strict";

/** Deep equality; `message` is shown on failure. */
export function assertEquals<T>(actual: T, expected: T, message?: string): void {
  if (message === undefined) assert.deepStrictEqual(actual, expected);
  else assert.deepStrictEqual(actual, expected, message);
}

/** Asserts `fn` throws an instance of `type` whose message includes `includes`. */
export function assertThrows(
  fn: () => unknown,
  type: new (...a: never[]) => Error,
  includes: string,
) {
  assert.throws(fn, (err: unknown) => {
    if (err instanceof type && err.message.includes(includes)) return true;
    throw err;
  });
}

/** Asserts `fn` rejects with an instance of `type` whose message includes `includes`. */
export async function assertRejects(
  fn: () => Promise<unknown>,
  type: new (...a: never[]) => Error,
  includes: string,
) {
  await assert.rejects(fn, (err: unknown) => {
    if (err instanceof type && err.message.includes(includes)) return true;
    throw err;
  });
}

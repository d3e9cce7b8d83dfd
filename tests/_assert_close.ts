/** Test helper: asserts two arrays agree within tolerance, naming the first mismatch. */

import { compareClose, type Tolerance } from "../src/util/compare.ts";

/** Throws with the first mismatching index and values when `actual` is not close to `expected`. */
export function assertClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  options: Tolerance & { label?: string } = {},
): void {
  const result = compareClose(actual, expected, options);
  if (!result.ok) throw new Error(`${options.label ?? "assertClose"}: ${result.message}`);
}

/**
 * Element-wise comparison with `|a - e| <= atol + rtol * |e|`, reporting the first mismatch.
 * Used by the tests' `assertClose` and by `rft info`'s self-check.
 */

/** Tolerances of a comparison. */
export interface Tolerance {
  atol?: number;
  rtol?: number;
}

/** Default tolerances per dtype of the GPU result. */
export const TOLERANCE = {
  f32: { atol: 1e-5, rtol: 1e-4 },
  f16: { atol: 1e-3, rtol: 1e-2 },
} as const;

/** Outcome of {@link compareClose}. */
export interface Comparison {
  ok: boolean;
  maxAbsError: number;
  /** First index out of tolerance, -1 when none. */
  firstMismatch: number;
  message: string;
}

/** Compares `actual` with `expected` element by element. */
export function compareClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  { atol = TOLERANCE.f32.atol, rtol = TOLERANCE.f32.rtol }: Tolerance = {},
): Comparison {
  if (actual.length !== expected.length) {
    return {
      ok: false,
      maxAbsError: Infinity,
      firstMismatch: 0,
      message: `length ${actual.length} differs from expected ${expected.length}`,
    };
  }
  let maxAbsError = 0;
  let firstMismatch = -1;
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i];
    const e = expected[i];
    const err = Math.abs(a - e);
    if (!(err <= atol + rtol * Math.abs(e)) || Number.isNaN(a) !== Number.isNaN(e)) {
      if (Number.isNaN(a) && Number.isNaN(e)) continue;
      if (firstMismatch < 0) firstMismatch = i;
      maxAbsError = Math.max(maxAbsError, Number.isNaN(err) ? Infinity : err);
    } else {
      maxAbsError = Math.max(maxAbsError, err);
    }
  }
  const ok = firstMismatch < 0;
  const message = ok
    ? `all ${actual.length} values within atol=${atol} rtol=${rtol} (max abs error ${
      maxAbsError.toExponential(2)
    })`
    : `index ${firstMismatch}: got ${actual[firstMismatch]}, expected ${
      expected[firstMismatch]
    } (atol=${atol} rtol=${rtol}, max abs error ${maxAbsError.toExponential(2)})`;
  return { ok, maxAbsError, firstMismatch, message };
}

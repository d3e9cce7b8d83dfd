/**
 * learningRate: warmup and each decay style at steps whose values are worked out by hand, the
 * floor past totalSteps, and config errors.
 */

import { learningRate } from "../../src/trainer/lr_schedule.ts";
import { assertClose } from "../_assert_close.ts";
import { assertThrows } from "../_asserts.ts";

/** learningRate at each of `steps`. */
const at = (schedule: Parameters<typeof learningRate>[0], steps: number[]) =>
  steps.map((s) => learningRate(schedule, s));

const TOL = { atol: 1e-15, rtol: 1e-12 };

Deno.test("learningRate: constant with linear warmup", () => {
  const schedule = { lr: 1e-3, lrWarmupSteps: 4 };
  assertClose(at(schedule, [0, 1, 2, 4, 100]), [0, 2.5e-4, 5e-4, 1e-3, 1e-3], TOL);
  assertClose(at({ lr: 3e-6 }, [0, 7]), [3e-6, 3e-6], TOL);
});

Deno.test("learningRate: cosine to minLrRatio after warmup, then flat", () => {
  const schedule = {
    lr: 1,
    lrWarmupSteps: 2,
    warmupStyle: "cosine" as const,
    minLrRatio: 0.1,
    totalSteps: 12,
  };
  // Step 4: q = 2/10, (1 + cos(0.2 pi)) / 2 = 0.9045084972; 0.1 + 0.9 * that = 0.9140576475.
  assertClose(
    at(schedule, [0, 1, 2, 4, 7, 12, 20]),
    [0, 0.5, 1, 0.91405764746, 0.55, 0.1, 0.1],
    { atol: 1e-10, rtol: 0 },
  );
});

Deno.test("learningRate: linear decay, with and without warmup", () => {
  const linear = { lr: 2, warmupStyle: "linear" as const, totalSteps: 10 };
  assertClose(at(linear, [0, 5, 10, 11]), [2, 1, 0, 0], TOL);
  const warmed = {
    lr: 1,
    lrWarmupSteps: 5,
    warmupStyle: "linear" as const,
    minLrRatio: 0.5,
    totalSteps: 50,
  };
  // Warmup 5 steps; then q = (step - 5) / 45.
  assertClose(at(warmed, [1, 5, 50]), [0.2, 1, 0.5], TOL);
  assertClose(at(warmed, [20]), [0.5 + 0.5 * (1 - 15 / 45)], TOL);
});

Deno.test("learningRate: rejects missing totals, bad steps, warmups and ratios, naming them", () => {
  assertThrows(
    () => learningRate({ lr: 1, warmupStyle: "cosine" }, 0),
    Error,
    'warmupStyle "cosine" needs a positive integer totalSteps, received undefined',
  );
  assertThrows(() => learningRate({ lr: 1 }, -1), Error, "expected a step >= 0, received -1");
  assertThrows(
    () => learningRate({ lr: 1, lrWarmupSteps: -1 }, 0),
    Error,
    "expected lrWarmupSteps an integer >= 0, received -1",
  );
  assertThrows(
    () => learningRate({ lr: 1, minLrRatio: 2 }, 0),
    Error,
    "expected minLrRatio in [0, 1], received 2",
  );
});

/**
 * learningRate: warmup and each decay style at steps whose values are worked out by hand,
 * warmup from a ratio, the floor past total_training_steps, and config errors.
 */

import { learningRate } from "../../src/trainer/lr_schedule.ts";
import { assertClose } from "../_assert_close.ts";
import { assertThrows } from "../_asserts.ts";

/** learningRate at each of `steps`. */
const at = (config: Parameters<typeof learningRate>[0], steps: number[]) =>
  steps.map((s) => learningRate(config, s));

const TOL = { atol: 1e-15, rtol: 1e-12 };

Deno.test("learningRate: constant with linear warmup", () => {
  const config = { lr: 1e-3, lr_warmup_steps: 4 };
  assertClose(at(config, [0, 1, 2, 4, 100]), [0, 2.5e-4, 5e-4, 1e-3, 1e-3], TOL);
  assertClose(at({ lr: 3e-6 }, [0, 7]), [3e-6, 3e-6], TOL);
});

Deno.test("learningRate: cosine to min_lr_ratio after warmup, then flat", () => {
  const config = {
    lr: 1,
    lr_warmup_steps: 2,
    warmup_style: "cosine" as const,
    min_lr_ratio: 0.1,
    total_training_steps: 12,
  };
  // Step 4: q = 2/10, (1 + cos(0.2 pi)) / 2 = 0.9045084972; 0.1 + 0.9 * that = 0.9140576475.
  assertClose(
    at(config, [0, 1, 2, 4, 7, 12, 20]),
    [0, 0.5, 1, 0.91405764746, 0.55, 0.1, 0.1],
    { atol: 1e-10, rtol: 0 },
  );
});

Deno.test("learningRate: linear decay, and warmup from lr_warmup_steps_ratio", () => {
  const linear = { lr: 2, warmup_style: "linear" as const, total_training_steps: 10 };
  assertClose(at(linear, [0, 5, 10, 11]), [2, 1, 0, 0], TOL);
  const ratio = {
    lr: 1,
    lr_warmup_steps: -1,
    lr_warmup_steps_ratio: 0.1,
    warmup_style: "linear" as const,
    min_lr_ratio: 0.5,
    total_training_steps: 50,
  };
  // Warmup 5 steps; then q = (step - 5) / 45.
  assertClose(at(ratio, [1, 5, 50]), [0.2, 1, 0.5], TOL);
  assertClose(at(ratio, [20]), [0.5 + 0.5 * (1 - 15 / 45)], TOL);
});

Deno.test("learningRate: rejects missing totals, bad steps and ratios, naming them", () => {
  assertThrows(
    () => learningRate({ lr: 1, warmup_style: "cosine" }, 0),
    Error,
    'warmup_style "cosine" needs a positive integer total_training_steps, received undefined',
  );
  assertThrows(() => learningRate({ lr: 1 }, -1), Error, "expected a step >= 0, received -1");
  assertThrows(
    () => learningRate({ lr: 1, min_lr_ratio: 2 }, 0),
    Error,
    "expected min_lr_ratio in [0, 1], received 2",
  );
});

import { assertEquals } from "../_asserts.ts";
import {
  formatDuration,
  formatMetric,
  formatProgressLine,
} from "../../src/monitor/console_progress.ts";

const ALL = {
  "rollout/reward_mean": 0.4212,
  "actor/loss": 0.03104,
  "actor/kl": 0.0021,
  "actor/entropy": 1.2,
  "rollout/response_length_mean": 18,
  "rollout/tokens_per_s": 340.4,
  "buffer/staleness_mean": 0.5,
  "other/ignored": 7,
};

Deno.test("the progress line shows bar, percent, ETA and the known metrics in order", () => {
  assertEquals(
    formatProgressLine(12, 100, 30, ALL),
    "step 12/100 [=>        ] 12% ETA 3m40s | reward 0.421 | loss 0.031 | kl 0.0021 | " +
      "entropy 1.2 | resp_len 18 | tok/s 340 | staleness 0.5",
  );
});

Deno.test("the progress line leaves out missing metrics, and the bar and ETA without a total", () => {
  assertEquals(formatProgressLine(3, undefined, 9, { "actor/loss": 2 }), "step 3 | loss 2");
  assertEquals(formatProgressLine(0, 50, 0, {}), "step 0/50 [>         ] 0%");
  assertEquals(formatProgressLine(50, 50, 100, {}), "step 50/50 [==========] 100% ETA 0s");
});

Deno.test("after a resume the ETA counts only the steps this session ran", () => {
  assertEquals(formatProgressLine(60, 100, 20, {}, 40), "step 60/100 [======>   ] 60% ETA 40s");
  assertEquals(formatProgressLine(40, 100, 1, {}, 40), "step 40/100 [====>     ] 40%");
});

Deno.test("metric values and durations are short", () => {
  assertEquals(
    [0.42, 0.0314159, 18, 340.4, 1234.5, -0.5, NaN, 1e-7].map(formatMetric),
    ["0.42", "0.0314", "18", "340", "1235", "-0.5", "NaN", "1e-7"],
  );
  assertEquals(
    [0.4, 42, 200, 3599.6, 7500].map(formatDuration),
    ["0s", "42s", "3m20s", "1h00m", "2h05m"],
  );
});

Deno.test("the progress line shows every eval accuracy of the step", () => {
  assertEquals(
    formatProgressLine(5, undefined, 10, {
      "eval/held_out/accuracy": 0.4567,
      "eval/held_out/reward_mean": 0.5,
      "eval/other/accuracy": 1,
    }),
    "step 5 | eval held_out acc 0.457 | eval other acc 1",
  );
});

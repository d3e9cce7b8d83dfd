import { assertEquals } from "../_asserts.ts";
import {
  ConsoleSink,
  formatDuration,
  formatMetric,
  formatProgressLine,
} from "../../src/monitor/console_progress.ts";
import { setLineSink } from "../../src/util/status_lines.ts";

const ALL = {
  "rollout/reward_mean": 0.4212,
  "actor/loss": 0.03104,
  "actor/kl": 0.0021,
  "actor/ppo_kl": 0.5,
  "actor/entropy": 1.2,
  "actor/lr": 0.001,
  "rollout/response_length_mean": 18,
  "rollout/tokens_per_s": 340.4,
  "actor/tokens_per_s": 999,
  "buffer/staleness_mean": 0.5,
  "other/ignored": 7,
};

Deno.test("the progress line: stage, step/total, bar, elapsed, ETA and the watched metrics in order", () => {
  assertEquals(
    formatProgressLine({
      stage: "grpo",
      step: 12,
      total: 100,
      elapsedSeconds: 30,
      secondsPerStep: 2.5,
    }, ALL),
    "[grpo] step 12/100 [=>        ] 12% 30s, ETA 3m40s | reward 0.421 | loss 0.031 | " +
      "kl 0.0021 | entropy 1.2 | lr 0.001 | tok/s 340 | resp_len 18 | staleness 0.5",
  );
});

Deno.test("the progress line falls back to PPO's KL and training tokens/s, and leaves out what is missing", () => {
  assertEquals(
    formatProgressLine({ step: 3, elapsedSeconds: 9 }, {
      "actor/loss": 2,
      "actor/ppo_kl": 0.01,
      "actor/tokens_per_s": 1234.5,
    }),
    "step 3 9s | loss 2 | kl 0.01 | tok/s 1235",
  );
  assertEquals(
    formatProgressLine({ step: 0, total: 50, elapsedSeconds: 0 }, {}),
    "step 0/50 [>         ] 0% 0s",
  );
  assertEquals(
    formatProgressLine({ step: 50, total: 50, elapsedSeconds: 100, secondsPerStep: 2 }, {}),
    "step 50/50 [==========] 100% 1m40s, ETA 0s",
  );
});

Deno.test("the ETA is the pace since the first step seen times the steps left; none before a pace", () => {
  assertEquals(
    formatProgressLine({ step: 60, total: 100, elapsedSeconds: 20, secondsPerStep: 1 }, {}),
    "step 60/100 [======>   ] 60% 20s, ETA 40s",
  );
  assertEquals(
    formatProgressLine({ step: 40, total: 100, elapsedSeconds: 1 }, {}),
    "step 40/100 [====>     ] 40% 1s",
  );
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
    formatProgressLine({ step: 5, elapsedSeconds: 10 }, {
      "eval/held_out/accuracy": 0.4567,
      "eval/held_out/reward_mean": 0.5,
      "eval/other/accuracy": 1,
    }),
    "step 5 10s | eval held_out acc 0.457 | eval other acc 1",
  );
});

/** What a terminal shows after `out`: carriage returns rewrite a line, ESC[K clears its rest. */
function screen(out: string): string[] {
  const lines: string[] = [""];
  let column = 0;
  for (let i = 0; i < out.length; i++) {
    if (out.startsWith("\x1b[K", i)) {
      lines[lines.length - 1] = lines[lines.length - 1].slice(0, column);
      i += 2;
    } else if (out[i] === "\r") column = 0;
    else if (out[i] === "\n") {
      lines.push("");
      column = 0;
    } else {
      const line = lines[lines.length - 1];
      lines[lines.length - 1] = line.slice(0, column) + out[i] + line.slice(column + 1);
      column++;
    }
  }
  return lines.filter((l, i) => l !== "" || i < lines.length - 1);
}

/** A progress line without its elapsed time (and ETA). */
const withoutTime = (line: string) => line.replace(/ \d+s(, ETA \d+s)?/, "");

Deno.test("the console redraws one line per step on a terminal, keeps evaluations, and writes a line per step otherwise", () => {
  for (const isTerminal of [true, false]) {
    let out = "";
    const previous = setLineSink({ write: (t) => out += t, isTerminal, columns: () => 200 });
    try {
      const sink = new ConsoleSink();
      sink.beginStage({ name: "sft", totalSteps: 2, startStep: 0 });
      sink.log({ step: 1, time: 0, metrics: { "actor/loss": 3 } });
      sink.log({ step: 1, time: 0, metrics: { "eval/held_out/accuracy": 0.5 } });
      sink.log({ step: 2, time: 0, metrics: { "actor/loss": 2 } });
      sink.endStage();
    } finally {
      setLineSink(previous);
    }
    if (isTerminal) {
      // On screen: the evaluation stays above; the step line was redrawn, its last state stays.
      assertEquals(screen(out).map(withoutTime), [
        "[sft] step 1/2 [=====>    ] 50% | eval held_out acc 0.5",
        "[sft] step 2/2 [==========] 100% | loss 2",
      ]);
      assertEquals(out.split("\n").length, 3, "two lines ended, nothing after");
    } else {
      assertEquals(out.trimEnd().split("\n").map(withoutTime), [
        "[sft] step 1/2 [=====>    ] 50% | loss 3",
        "[sft] step 1/2 [=====>    ] 50% | eval held_out acc 0.5",
        "[sft] step 2/2 [==========] 100% | loss 2",
      ]);
    }
  }
});

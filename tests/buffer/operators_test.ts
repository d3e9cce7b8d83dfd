import type { Experience } from "../../src/buffer/experience.ts";
import {
  createOperators,
  EXPERIENCE_OPERATORS,
  type OperatorResult,
  type OperatorSpec,
  runOperators,
} from "../../src/buffer/operators/mod.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";

/** A one-token experience of `taskId` with `reward`, eid `${taskId}/${runId}`. */
function exp(taskId: string, runId: number, reward: number | null): Experience {
  return {
    tokens: [1],
    promptLength: 1,
    actionMask: [0],
    logprobs: [0],
    reward,
    info: { taskId, runId, policyVersion: 0, eid: `${taskId}/${runId}` },
  };
}

/**
 * Group a: rewards 1, 0, 1 (varied); group b: 1, 1 (all equal); group c: 0.5 alone;
 * group d: null, 0 (one null).
 */
const BATCH: readonly Experience[] = [
  exp("a", 0, 1),
  exp("b", 0, 1),
  exp("a", 1, 0),
  exp("c", 0, 0.5),
  exp("a", 2, 1),
  exp("b", 1, 1),
  exp("d", 0, null),
  exp("d", 1, 0),
];

/** Runs the single operator `name` with `args` over `exps`. */
function run(name: string, exps: readonly Experience[], args = {}): OperatorResult {
  return runOperators(createOperators([{ name, args }]), exps);
}

const eids = (result: OperatorResult) => result.experiences.map((e) => e.info.eid);

Deno.test("operators: the registry lists the built-ins", () => {
  assertEquals(EXPERIENCE_OPERATORS.names(), [
    "dapo_dynamic_sampling",
    "invalid_reward_filter",
    "mask_response_truncated",
    "pass_rate_calculator",
    "reward_filter",
    "reward_shaping_mapper",
    "reward_std_filter",
  ]);
});

Deno.test("operators: reward_filter keeps reward >= threshold and drops null rewards", () => {
  const result = run("reward_filter", BATCH, { threshold: 0.5 });
  assertEquals(eids(result), ["a/0", "b/0", "c/0", "a/2", "b/1"]);
  assertEquals(result.metrics, { "reward_filter/filtered_count": 3 });
  assertEquals(eids(run("reward_filter", BATCH)), [
    "a/0",
    "b/0",
    "a/1",
    "c/0",
    "a/2",
    "b/1",
    "d/1",
  ]);
  assertEquals(run("reward_filter", []), {
    experiences: [],
    metrics: { "reward_filter/filtered_count": 0 },
  });
});

Deno.test("operators: reward_std_filter drops equal-reward and single-sample groups whole", () => {
  const result = run("reward_std_filter", BATCH);
  // b is all equal, c has one sample, d has one non-null reward: only a has a spread.
  assertEquals(eids(result), ["a/0", "a/1", "a/2"]);
  assertEquals(result.metrics, {
    "reward_std_filter/filtered_count": 5,
    "reward_std_filter/filtered_groups": 3,
  });
  // The unbiased std of group a (1, 0, 1) is 1/sqrt(3) ~ 0.577.
  assertEquals(eids(run("reward_std_filter", BATCH, { threshold: 0.6 })), []);
  assertEquals(eids(run("reward_std_filter", BATCH, { threshold: 0.5 })), ["a/0", "a/1", "a/2"]);
  const allNull = [exp("e", 0, null), exp("e", 1, null)];
  assertEquals(run("reward_std_filter", allNull).experiences, []);
  assertEquals(run("reward_std_filter", []).metrics, {
    "reward_std_filter/filtered_count": 0,
    "reward_std_filter/filtered_groups": 0,
  });
});

Deno.test("operators: invalid_reward_filter drops null, NaN and infinite rewards", () => {
  const batch = [exp("a", 0, 1), exp("a", 1, NaN), exp("a", 2, -Infinity), exp("a", 3, null)];
  const result = run("invalid_reward_filter", batch);
  assertEquals(eids(result), ["a/0"]);
  assertEquals(result.metrics, { "invalid_reward_filter/filtered_count": 3 });
  assertEquals(eids(run("invalid_reward_filter", [exp("a", 0, null)])), []);
  assertEquals(eids(run("invalid_reward_filter", [])), []);
});

Deno.test("operators: pass_rate_calculator reports pass rates and keeps every experience", () => {
  const result = run("pass_rate_calculator", BATCH);
  assertEquals(result.experiences, [...BATCH]);
  // Passing (reward >= 1): a 2 of 3, b 2 of 2, c 0 of 1, d 0 of 2.
  assertEquals(result.metrics, {
    "pass_rate_calculator/count": 8,
    "pass_rate_calculator/groups": 4,
    "pass_rate_calculator/all_pass_groups": 1,
    "pass_rate_calculator/no_pass_groups": 2,
    "pass_rate_calculator/pass_rate": 4 / 8,
    "pass_rate_calculator/group_pass_rate_mean": (2 / 3 + 1 + 0 + 0) / 4,
  });
  const half = run("pass_rate_calculator", BATCH, { threshold: 0.5 }).metrics;
  assertEquals(half["pass_rate_calculator/pass_rate"], 5 / 8);
  assertEquals(run("pass_rate_calculator", []).metrics, {
    "pass_rate_calculator/count": 0,
    "pass_rate_calculator/groups": 0,
    "pass_rate_calculator/all_pass_groups": 0,
    "pass_rate_calculator/no_pass_groups": 0,
  });
  const allNull = run("pass_rate_calculator", [exp("e", 0, null), exp("e", 1, null)]).metrics;
  assertEquals(allNull["pass_rate_calculator/pass_rate"], 0);
  assertEquals(allNull["pass_rate_calculator/no_pass_groups"], 1);
});

Deno.test("operators: a pipeline runs in order and merges every operator's metrics", () => {
  const specs: OperatorSpec[] = [
    { name: "invalid_reward_filter" },
    { name: "pass_rate_calculator" },
    { name: "reward_std_filter" },
  ];
  const result = runOperators(createOperators(specs), BATCH);
  assertEquals(eids(result), ["a/0", "a/1", "a/2"]);
  assertEquals(result.metrics["invalid_reward_filter/filtered_count"], 1);
  // The calculator saw the 7 valid rewards; d is now a single-sample group.
  assertEquals(result.metrics["pass_rate_calculator/count"], 7);
  assertEquals(result.metrics["reward_std_filter/filtered_groups"], 3);
  assertEquals(runOperators([], BATCH).experiences, [...BATCH]);
});

Deno.test("operators: configuration errors name the operator, the key and the near miss", () => {
  assertThrows(
    () => createOperators([{ name: "reward_filtr" }]),
    Error,
    `Unknown experience operator "reward_filtr"; known: dapo_dynamic_sampling, ` +
      `invalid_reward_filter, mask_response_truncated, pass_rate_calculator, reward_filter, ` +
      `reward_shaping_mapper, reward_std_filter. Did you mean "reward_filter"?`,
  );
  assertThrows(
    () => createOperators([{ name: "reward_filter", args: { treshold: 1 } }]),
    Error,
    `unknown key "treshold"`,
  );
  assertThrows(
    () => createOperators([{ name: "reward_filter", args: { threshold: "1" } }]),
    Error,
    `key "threshold" expected a number, received "1"`,
  );
  assertThrows(
    () => createOperators([{ name: "reward_filter" }, { name: "reward_filter" }]),
    Error,
    `"reward_filter": it is listed twice`,
  );
});

Deno.test("reward_shaping_mapper: rewards reshaped by recorded numbers, rule by rule", () => {
  const exp = (reward: number | null, metrics?: Record<string, number>) => ({
    ...BATCH[0],
    reward,
    metrics,
  });
  const [op] = createOperators([{
    name: "reward_shaping_mapper",
    args: {
      reward_shaping_configs: [
        { stats_key: "quality", op_type: "ADD", weight: 0.5 },
        { stats_key: "scale", op_type: "MUL", weight: 2 },
        { stats_key: "zero", op_type: "DIV", weight: 1 },
      ],
    },
  }]);
  const input = [exp(1, { quality: 2, scale: 3, zero: 0 }), exp(1, {}), exp(null, { quality: 1 })];
  const { experiences, metrics } = op.process(input);
  // (1 + 0.5 * 2) * (2 * 3) = 12; division by 0 skipped; missing keys and null rewards kept.
  assertEquals(experiences.map((e) => e.reward), [12, 1, null]);
  assertEquals(input[0].reward, 1, "the input is not changed");
  assertEquals(metrics, {
    "reward_diff/mean": 11 / 3,
    "reward_diff/min": 0,
    "reward_diff/max": 11,
  });
  assertThrows(
    () =>
      createOperators([{
        name: "reward_shaping_mapper",
        args: { reward_shaping_configs: [{ stats_key: "q", op_type: "POW" }] },
      }]),
    Error,
    "reward_shaping_configs[0] op_type expected one of ADD, SUB, MUL, DIV",
  );
});

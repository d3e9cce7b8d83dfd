/**
 * The operators of Trinity's DAPO example: `mask_response_truncated` zeroes the action mask of
 * truncated responses and keeps everything; `dapo_dynamic_sampling` keeps mixed-correctness
 * groups only, by the accuracy metric (else the reward); and dynamic sampling treats it as its
 * group filter.
 */

import type { Experience } from "../../src/buffer/experience.ts";
import { createOperators, runOperators } from "../../src/buffer/operators/mod.ts";
import { withGroupFilter } from "../../src/run/dynamic_sampling.ts";
import { assertEquals } from "../_asserts.ts";

/** A 2-token prompt + 2-token response experience of `taskId`. */
function exp(
  taskId: string,
  runId: number,
  reward: number,
  extra: Partial<Experience> = {},
): Experience {
  return {
    tokens: [1, 2, 3, 4],
    promptLength: 2,
    actionMask: [0, 0, 1, 1],
    logprobs: [0, 0, -0.5, -0.25],
    reward,
    info: { taskId, runId, policyVersion: 0, eid: `${taskId}/${runId}` },
    ...extra,
  };
}

const run = (name: string, exps: Experience[], args = {}) =>
  runOperators(createOperators([{ name, args }]), exps);

Deno.test("mask_response_truncated: truncated responses keep their place with an all-zero mask", () => {
  const advantages = [0, 0, 0.5, 0.5];
  const batch = [
    exp("a", 0, 1, { truncated: true, advantages }),
    exp("a", 1, 0),
    exp("b", 0, 1),
  ];
  const result = run("mask_response_truncated", batch);
  assertEquals(result.metrics, { "mask_response_truncated/masked_truncated_count": 1 });
  assertEquals(result.experiences.map((e) => e.actionMask), [
    [0, 0, 0, 0],
    [0, 0, 1, 1],
    [0, 0, 1, 1],
  ]);
  assertEquals(result.experiences[0].logprobs, [0, 0, 0, 0]);
  assertEquals(result.experiences[0].advantages, [0, 0, 0, 0]);
  assertEquals(result.experiences[1].advantages, undefined);
  assertEquals(result.experiences[0].reward, 1);
  assertEquals(batch[0].actionMask, [0, 0, 1, 1], "the input is not mutated");
});

Deno.test("dapo_dynamic_sampling: keeps groups with some but not all rollouts correct", () => {
  // a: accuracy 1, 0 (mixed, kept); b: 1, 1 (all correct); c: 0, 0 (all wrong, though the
  // DAPO rewards with penalties differ); d: a single rollout; e: no metric, rewards -1, 1.
  const acc = (a: number) => ({ metrics: { accuracy: a } });
  const batch = [
    exp("a", 0, 1, acc(1)),
    exp("b", 0, 1, acc(1)),
    exp("a", 1, -1, acc(0)),
    exp("b", 1, 0.5, acc(1)),
    exp("c", 0, -1, acc(0)),
    exp("c", 1, -1.5, acc(0)),
    exp("d", 0, 1, acc(1)),
    exp("e", 0, -1),
    exp("e", 1, 1),
  ];
  const result = run("dapo_dynamic_sampling", batch);
  assertEquals(result.experiences.map((e) => e.info.eid), ["a/0", "a/1", "e/0", "e/1"]);
  assertEquals(result.metrics, {
    "dapo_dynamic_sampling/filtered_count": 5,
    "dapo_dynamic_sampling/dropped_all_correct": 2,
    "dapo_dynamic_sampling/dropped_all_wrong": 2,
  });
  const strict = run("dapo_dynamic_sampling", batch, { metric_key: "x", correct_threshold: 0.9 });
  // By reward above 0.9: a (1, -1) and e (-1, 1) mixed; b (1, 0.5) mixed too.
  assertEquals(strict.experiences.map((e) => e.info.eid), [
    "a/0",
    "b/0",
    "a/1",
    "b/1",
    "e/0",
    "e/1",
  ]);
});

Deno.test("dynamic sampling: dapo_dynamic_sampling stands in for the default group filter", () => {
  const on = { maxNumGenBatches: 3 };
  const listed = createOperators([{ name: "mask_response_truncated" }, {
    name: "dapo_dynamic_sampling",
  }]);
  assertEquals(withGroupFilter(listed, on).map((op) => op.name), [
    "mask_response_truncated",
    "dapo_dynamic_sampling",
  ]);
  assertEquals(withGroupFilter(listed.slice(0, 1), on).map((op) => op.name), [
    "mask_response_truncated",
    "reward_std_filter",
  ]);
});

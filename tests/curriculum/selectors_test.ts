/**
 * The task selectors, one by one: a seeded draw order that repeats, what feedback does to the
 * adaptive one on hand-computed cases, and a state saved mid-run that continues exactly.
 */

import { assertEquals, assertThrows } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { createSelector, type TaskSelector } from "../../src/buffer/selectors/mod.ts";

/** A selector context over `size` rows whose feature columns are `features`. */
function context(size: number, seed: number, features: Record<string, number[]> = {}) {
  return {
    size,
    seed,
    featureKeys: Object.keys(features),
    feature: (key: string) => features[key],
  };
}

/** `steps` batches of `batch` draws, each followed by `feedback(indices)` as the update. */
function drive(
  selector: TaskSelector,
  batch: number,
  steps: number,
  from = 0,
  feedback: (i: number) => number = (i) => (i % 3) / 2,
): number[][] {
  return Array.from({ length: steps }, (_, s) => {
    const indices = selector.select(from + s * batch, batch);
    selector.update(indices, indices.map(feedback));
    return indices;
  });
}

/** Runs 6 steps straight, and 3 steps + a JSON round trip of the state + 3 steps: equal. */
function assertResumes(make: () => TaskSelector, batch: number): void {
  const straight = drive(make(), batch, 6);
  const first = make();
  const before = drive(first, batch, 3);
  const resumed = make();
  const saved = first.state();
  if (saved !== undefined) resumed.restore(JSON.parse(JSON.stringify(saved)));
  assertEquals([...before, ...drive(resumed, batch, 3, 3 * batch)], straight);
}

Deno.test("sequential draws rows in order every epoch, whatever the seed", () => {
  const selector = createSelector("sequential", context(4, 1));
  assertEquals(selector.select(0, 6), [0, 1, 2, 3, 0, 1]);
  assertEquals(createSelector("sequential", context(4, 2)).select(2, 4), [2, 3, 0, 1]);
  assertEquals(selector.state(), undefined);
  assertResumes(() => createSelector("sequential", context(5, 3)), 2);
});

Deno.test("shuffle is a seeded permutation per epoch; a run resumes where it stopped", () => {
  const order = createSelector("shuffle", context(10, 7)).select(0, 20);
  assertEquals(order, createSelector("shuffle", context(10, 7)).select(0, 20));
  const sorted = Array.from({ length: 10 }, (_, i) => i);
  assertEquals([...order.slice(0, 10)].sort((a, b) => a - b), sorted);
  assertEquals([...order.slice(10)].sort((a, b) => a - b), sorted);
  assertEquals(order.slice(0, 10).join() !== order.slice(10).join(), true, "per epoch");
  assertEquals(
    order.join() !== createSelector("shuffle", context(10, 8)).select(0, 20).join(),
    true,
    "per seed",
  );
  assertResumes(() => createSelector("shuffle", context(7, 3)), 3);
});

Deno.test("random draws with replacement, seeded; a run resumes where it stopped", () => {
  const order = createSelector("random", context(30, 7)).select(0, 30);
  assertEquals(order, createSelector("random", context(30, 7)).select(0, 30));
  assertEquals(new Set(order).size < 30, true, "some row is drawn twice");
  assertEquals(order.every((i) => Number.isInteger(i) && i >= 0 && i < 30), true);
  assertResumes(() => createSelector("random", context(7, 3)), 3);
});

Deno.test("offline_easy2hard sorts by its feature columns, highest first unless told otherwise", () => {
  const features = { digits: [3, 1, 2, 1, 3], tie: [0, 5, 0, 4, 1] };
  // Trinity's order: the highest value is the easiest; ties by the next key, then by row.
  assertEquals(
    createSelector("offline_easy2hard", context(5, 0, features)).select(0, 7),
    [4, 0, 2, 1, 3, 4, 0],
  );
  // A difficulty column: ascending.
  assertEquals(
    createSelector("offline_easy2hard", context(5, 0, features), { descending: false })
      .select(0, 5),
    [3, 1, 2, 0, 4],
  );
  assertThrows(
    () => createSelector("offline_easy2hard", context(5, 0)),
    Error,
    "offline_easy2hard expected at least one feature key, found none",
  );
  assertResumes(() => createSelector("offline_easy2hard", context(5, 0, features)), 2);
});

/** Three tasks whose anchors (low, high) are (0, 1), (0, 0.5), (0, 0). */
const ANCHORS = { low: [0, 0, 0], high: [1, 0.5, 0] };
const KNOBS = { m: 4, lamb: 0.5, rho: 0.5, tau: 0 };

Deno.test("difficulty_based: one update moves the Beta estimates as BOTS' rule says", () => {
  const selector = createSelector("difficulty_based", context(3, 1, ANCHORS), {
    ...KNOBS,
    target_reward: 0.25,
  });
  // Before any feedback every task is Beta(1, 1): mean 0.5, a tie, drawn by row.
  assertEquals(selector.select(0, 3), [0, 1, 2]);
  selector.update([0], [0.5]);
  // cap = (0.5 - 0) / (1 - 0) = 0.5, so the priors are 0.5, 0.25 and 0.
  // Task 0 (seen, rate 0.5): alpha = 0.5 * 1 + 0.5 + 0.5 * 2 + 0.5 * 0.5 * 4 = 3, beta = 3.
  // Task 1 (prior 0.25): alpha = 1 + 0.5 * 0.25 * 4 = 1.5, beta = 1 + 0.5 * 0.75 * 4 = 2.5.
  // Task 2 (prior 0): alpha = 1, beta = 1 + 0.5 * 4 = 3.
  const [p0, p1, p2] = selector.estimate!([0, 1, 2]);
  assertClose([p0], [0.5], { atol: 1e-6, rtol: 0 });
  assertClose([p1], [1.5 / 4], { atol: 1e-6, rtol: 0 });
  assertClose([p2], [0.25], { atol: 1e-6, rtol: 0 });
  // Target 0.25: task 2 scores 0, task 1 -0.125, task 0 -0.25.
  assertEquals(selector.select(3, 3), [2, 1, 0]);
  const state = selector.state() as { alphas: number[]; betas: number[] };
  assertClose([state.alphas[0]], [3], { atol: 1e-6, rtol: 0 });
  assertClose([state.betas[2]], [3], { atol: 1e-6, rtol: 0 });
});

Deno.test("difficulty_based samples by softmax(-|target - p| / tau), seeded by the draw", () => {
  const make = () =>
    createSelector("difficulty_based", context(3, 5, ANCHORS), {
      ...KNOBS,
      tau: 0.05,
      target_reward: 0.25,
    });
  const selector = make();
  selector.update([0], [0.5]);
  // Weights e^0, e^(-0.125 / 0.05), e^(-0.25 / 0.05) for tasks 2, 1, 0: task 2 first 91.8%.
  const firsts = Array.from({ length: 2000 }, (_, d) => selector.select(d, 1)[0]);
  const share = (i: number) => firsts.filter((x) => x === i).length / firsts.length;
  const z = 1 + Math.exp(-2.5) + Math.exp(-5);
  assertClose([share(2)], [1 / z], { atol: 0.02, rtol: 0 });
  assertClose([share(1)], [Math.exp(-2.5) / z], { atol: 0.02, rtol: 0 });
  // Without replacement within a batch; the same draw numbers give the same batch.
  assertEquals(new Set(selector.select(7, 3)).size, 3);
  assertEquals(selector.select(11, 2), selector.select(11, 2));
  // A batch larger than the taskset repeats rows only after every row is drawn.
  assertEquals([...selector.select(0, 6)].sort(), [0, 0, 1, 1, 2, 2]);
  assertResumes(make, 2);
});

Deno.test("difficulty_based with do_sample scores Beta draws; a run resumes exactly", () => {
  const make = () =>
    createSelector(
      "difficulty_based",
      context(6, 9, {
        low: [0, 0, 0, 0.2, 0.1, 0],
        high: [1, 0.8, 0.6, 0.4, 0.3, 0.1],
      }),
      { do_sample: true, tau: 0.1, target_reward: 0.5, adaptive_rho: true },
    );
  assertEquals(make().select(0, 4), make().select(0, 4));
  assertResumes(make, 2);
});

Deno.test("difficulty_based rejects settings it cannot use", () => {
  assertThrows(
    () => createSelector("difficulty_based", context(3, 1, { low: [0, 0, 0] })),
    Error,
    "difficulty_based expected 2 feature keys (two anchor pass rates per task), found 1",
  );
  assertThrows(
    () => createSelector("difficulty_based", context(3, 1, ANCHORS), { temperature: 1 }),
    Error,
    `Cannot configure task selector "difficulty_based": unknown key "temperature"`,
  );
  assertThrows(
    () => createSelector("difficulty_based", context(3, 1, ANCHORS)).restore({ alphas: [1] }),
    Error,
    "expected beliefs about 3 tasks, found 1",
  );
});

import { Synchronizer, type SyncStyle } from "../../src/sync/synchronizer.ts";
import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";
import { isSettled } from "../_settled.ts";

/** A synchronizer whose weight copy records the versions it hands over. */
function scripted(style: SyncStyle, interval: number, offset: number, signal?: AbortSignal) {
  const copies: number[] = [];
  const synced: number[] = [];
  let trainerVersion = 0;
  const sync = new Synchronizer({
    style,
    interval,
    offset,
    copyWeights: (then) => {
      copies.push(trainerVersion);
      then();
      return Promise.resolve();
    },
    onSync: (version) => synced.push(version),
    initialVersion: 0,
    signal,
  });
  return {
    sync,
    copies,
    synced,
    /** Train step `step` as the trainer loop runs it. */
    async train(step: number) {
      await sync.beforeTrainStep(step);
      trainerVersion = step;
      await sync.afterTrainStep(step);
    },
  };
}

/** Runs `steps` explore and train steps as two concurrent loops; the version of each explore step. */
async function runBoth(style: SyncStyle, interval: number, offset: number, steps: number) {
  const s = scripted(style, interval, offset);
  const versions: number[] = [];
  const explorer = async () => {
    try {
      for (let step = 1; step <= steps; step++) {
        await s.sync.beforeExploreStep(step);
        versions.push(s.sync.explorerVersion);
        await new Promise((resolve) => setTimeout(resolve, 0));
        s.sync.exploreStepDone(step);
      }
    } finally {
      s.sync.explorerFinished();
    }
  };
  const trainer = async () => {
    try {
      for (let step = 1; step <= steps; step++) await s.train(step);
    } finally {
      s.sync.trainerFinished();
    }
  };
  await Promise.all([explorer(), trainer()]);
  return { versions, copies: s.copies, metrics: s.sync.metrics() };
}

Deno.test("fixed: each explore step samples interval * floor((s - 1 - offset) / interval)", async () => {
  assertEquals((await runBoth("fixed", 1, 0, 5)).versions, [0, 1, 2, 3, 4]);
  assertEquals((await runBoth("fixed", 1, 1, 5)).versions, [0, 0, 1, 2, 3]);
  const two = await runBoth("fixed", 2, 0, 6);
  assertEquals(two.versions, [0, 0, 2, 2, 4, 4]);
  assertEquals(two.copies, [2, 4]);
  assertEquals(two.metrics["sync/count"], 2);
  assertEquals(two.metrics["sync/trainer_version"], 6);
});

Deno.test("fixed, offset 0: the explorer waits for the trainer's version, the trainer for the explorer's step", async () => {
  const s = scripted("fixed", 1, 0);
  await s.sync.beforeExploreStep(1);
  // The trainer cannot train step 1 before explore step 1 is in the buffer.
  const train1 = s.train(1);
  assertEquals(await isSettled(train1), false);
  s.sync.exploreStepDone(1);
  assertEquals(await isSettled(train1), true);
  // Explore step 2 needs version 1: it was trained, so it is copied without waiting.
  assertEquals(await isSettled(s.sync.beforeExploreStep(2)), true);
  assertEquals([s.copies, s.synced, s.sync.explorerVersion], [[1], [1], 1]);
  // Explore step 3 needs version 2, which the trainer has not made: the explorer waits.
  s.sync.exploreStepDone(2);
  const explore3 = s.sync.beforeExploreStep(3);
  assertEquals(await isSettled(explore3), false);
  await s.train(2);
  assertEquals(await isSettled(explore3), true);
  assertEquals(s.sync.explorerVersion, 2);
});

Deno.test("fixed, offset 1: the trainer does not overwrite a version the explorer has not taken", async () => {
  const s = scripted("fixed", 1, 1);
  await s.sync.beforeExploreStep(1);
  s.sync.exploreStepDone(1);
  await s.sync.beforeExploreStep(2); // version 0 still: one step off
  s.sync.exploreStepDone(2);
  await s.train(1);
  // Train step 2 would make version 2 while the explorer has not taken version 1.
  const train2 = s.train(2);
  assertEquals(await isSettled(train2), false);
  await s.sync.beforeExploreStep(3);
  assertEquals(s.sync.explorerVersion, 1);
  assertEquals(await isSettled(train2), true);
  // Once the explorer has finished, the trainer waits for nobody.
  s.sync.exploreStepDone(3);
  s.sync.explorerFinished();
  assertEquals(await isSettled(s.train(3)), true);
  assertEquals(await isSettled(s.train(4)), true);
});

Deno.test("explorer_driven: the explorer takes what the trainer has every interval steps; nobody waits", async () => {
  const s = scripted("explorer_driven", 2, 0);
  // The trainer has trained nothing: explore steps 1..3 still go ahead at version 0.
  for (const step of [1, 2, 3]) {
    assertEquals(await isSettled(s.sync.beforeExploreStep(step)), true);
    s.sync.exploreStepDone(step);
  }
  assertEquals(s.copies, []);
  await s.train(1);
  await s.train(2);
  await s.train(3);
  // Step 4 is not a sync point (interval 2); step 5 is, and takes version 3.
  await s.sync.beforeExploreStep(4);
  assertEquals(s.sync.explorerVersion, 0);
  await s.sync.beforeExploreStep(5);
  assertEquals([s.sync.explorerVersion, s.copies, s.synced], [3, [3], [3]]);
  // The trainer never waits for the explorer to take its versions.
  s.sync.exploreStepDone(5);
  assertEquals(await isSettled(s.train(4)), true);
  assertEquals(await isSettled(s.train(5)), true);
});

Deno.test("trainer_driven: the trainer pushes every interval train steps; the explorer never waits", async () => {
  const s = scripted("trainer_driven", 2, 0);
  for (const step of [1, 2, 3]) {
    assertEquals(await isSettled(s.sync.beforeExploreStep(step)), true);
    s.sync.exploreStepDone(step);
  }
  await s.train(1);
  assertEquals(s.sync.explorerVersion, 0);
  await s.train(2);
  assertEquals([s.sync.explorerVersion, s.copies, s.synced], [2, [2], [2]]);
  await s.train(3);
  assertEquals(s.sync.explorerVersion, 2);
  assertEquals(await isSettled(s.sync.beforeExploreStep(4)), true);
  assertEquals(s.sync.metrics(), {
    "sync/explorer_version": 2,
    "sync/trainer_version": 3,
    "sync/count": 1,
  });
});

Deno.test("an abort ends every wait with the abort's reason", async () => {
  const controller = new AbortController();
  const s = scripted("fixed", 1, 0, controller.signal);
  const explore = s.sync.beforeExploreStep(2);
  const train = s.train(1);
  controller.abort(new Error("run stopped"));
  await assertRejects(() => explore, Error, "run stopped");
  await assertRejects(() => train, Error, "run stopped");
});

Deno.test("a bad interval or offset is refused naming the key", () => {
  const make = (interval: number, offset: number) => () =>
    new Synchronizer({
      style: "fixed",
      interval,
      offset,
      copyWeights: () => Promise.resolve(),
      onSync: () => {},
      initialVersion: 0,
    });
  assertThrows(make(0, 0), Error, "sync_interval must be an integer >= 1, received 0");
  assertThrows(make(1, -1), Error, "sync_offset must be an integer >= 0, received -1");
});

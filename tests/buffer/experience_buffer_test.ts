import type { Experience } from "../../src/buffer/experience.ts";
import {
  BUFFER_STATE_FILE,
  ExperienceBuffer,
  type ExperienceBufferOptions,
} from "../../src/buffer/experience_buffer.ts";
import { readExperienceDir } from "../../src/buffer/experience_io.ts";
import { assertEquals, assertRejects } from "../_asserts.ts";
import { inTempDir } from "../_temp_dir.ts";

/** A small experience with eid `name` from policy version `version`. */
function exp(name: string, version = 0): Experience {
  return {
    tokens: [1, 2],
    promptLength: 1,
    actionMask: [0, 1],
    logprobs: [0, -0.5],
    reward: 1,
    info: { taskId: name[0], runId: 0, policyVersion: version, eid: name },
  };
}

const eids = (exps: readonly Experience[]) => exps.map((e) => e.info.eid);

/** Whether `promise` has settled after the pending tasks and a short wait have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(() => done = true, () => done = true);
  await new Promise((resolve) => setTimeout(resolve, 20));
  return done;
}

Deno.test("buffer: a put beyond capacity waits until a take makes room", async () => {
  await inTempDir("rft-buffer-", async (dir) => {
    const buffer = await ExperienceBuffer.open(dir, { capacity: 2 });
    await buffer.put([exp("a0"), exp("a1")]);
    const blocked = buffer.put([exp("b0")]);
    assertEquals(await settled(blocked), false);
    assertEquals(eids(await buffer.take(1)), ["a0"]);
    assertEquals(await blocked, { accepted: 1, rejected: 0, evicted: 0 });
    assertEquals(eids(await buffer.take(2)), ["a1", "b0"]);
    await assertRejects(
      () => buffer.put([exp("c0"), exp("c1"), exp("c2")]),
      Error,
      "Cannot put 3 experiences into the buffer: expected at most its capacity, 2",
    );
    await buffer.put([exp("d0"), exp("d1")]);
    const waiting = buffer.put([exp("e0")]);
    await buffer.close();
    await assertRejects(() => waiting, Error, `Cannot put: the buffer at ${dir} is closed`);
  });
});

Deno.test("buffer: a take waits for n, ends at close with what is left, and aborts", async () => {
  await inTempDir("rft-buffer-", async (dir) => {
    const buffer = await ExperienceBuffer.open(dir, { capacity: 4 });
    const taking = buffer.take(3);
    await buffer.put([exp("a0"), exp("a1")]);
    assertEquals(await settled(taking), false);
    await buffer.put([exp("b0")]);
    assertEquals(eids(await taking), ["a0", "a1", "b0"]);

    const controller = new AbortController();
    const aborted = buffer.take(1, { signal: controller.signal });
    controller.abort(new Error("trainer stopped"));
    await assertRejects(() => aborted, Error, "trainer stopped");

    await buffer.put([exp("c0")]);
    const draining = buffer.take(2);
    await buffer.close();
    assertEquals(eids(await draining), ["c0"]);
    assertEquals(await buffer.take(2), []);
    await assertRejects(() => buffer.take(0), Error, "expected a count >= 1, received 0");
  });
});

Deno.test("buffer: after a kill, acknowledged experiences survive and consumed ones stay consumed", async () => {
  await inTempDir("rft-buffer-", async (dir) => {
    const first = await ExperienceBuffer.open(dir, { capacity: 10 });
    await first.put([exp("a0"), exp("a1"), exp("a2")]);
    await first.put([exp("b0"), exp("b1")]);
    assertEquals(eids(await first.take(2)), ["a0", "a1"]);
    // The process dies here: no close, and a part write it had started is left half done.
    await Deno.writeTextFile(`${dir}/part-9999999999999-x.parquet.0123.tmp`, "PAR1 half a part");

    const onDisk = await readExperienceDir(dir);
    assertEquals(eids(onDisk.experiences), ["a0", "a1", "a2", "b0", "b1"]);
    assertEquals(onDisk.parts.length, 2);
    assertEquals(onDisk.warnings.length, 1);

    const second = await ExperienceBuffer.open(dir, { capacity: 10 });
    // `has` knows held and consumed eids alike (a cluster trainer skips them when re-delivered).
    assertEquals(["a0", "b1", "z9"].map((eid) => second.has(eid)), [true, true, false]);
    assertEquals(second.restoreWarnings.length, 1);
    assertEquals(second.metrics().restored, 3);
    assertEquals(eids(await second.take(3)), ["a2", "b0", "b1"]);
    await second.put([exp("c0")]);
    // Killed again without close; the third opening sees only the new one.
    const third = await ExperienceBuffer.open(dir, { capacity: 10 });
    assertEquals(eids(await third.take(1)), ["c0"]);
    await third.close();
    const fourth = await ExperienceBuffer.open(dir, { capacity: 10 });
    assertEquals(fourth.metrics().size, 0);
    await fourth.close();
    assertEquals(await Deno.stat(`${dir}/${BUFFER_STATE_FILE}`).then((s) => s.isFile), true);
  });
});

Deno.test("buffer: experiences named by discard are retired at open, never handed out", async () => {
  await inTempDir("rft-buffer-", async (dir) => {
    const first = await ExperienceBuffer.open(dir, { capacity: 10 });
    await first.put([exp("a0"), exp("a1")]);
    await first.put([exp("b0"), exp("b1")]);
    assertEquals(eids(await first.take(1)), ["a0"]);
    // Killed; the explorer's cursor names b0, b1 (and a c0 never persisted) as pending.
    const second = await ExperienceBuffer.open(dir, { capacity: 10, discard: ["b0", "b1", "c0"] });
    assertEquals([second.metrics().restored, second.metrics().discarded], [1, 2]);
    assertEquals(["b0", "c0"].map((eid) => second.has(eid)), [true, false]);
    assertEquals(second.metrics().size, 1);
    await second.close();
    // Retired for good: a later open without discard hands out a1 alone.
    const third = await ExperienceBuffer.open(dir, { capacity: 10 });
    assertEquals(third.metrics().discarded, 0);
    await third.close();
    assertEquals(eids(await third.take(5)), ["a1"]);
  });
});

Deno.test("buffer: stale experiences are dropped at take, future ones rejected", async () => {
  await inTempDir("rft-buffer-", async (dir) => {
    const options: ExperienceBufferOptions = { capacity: 10, maxStaleness: 1, policyVersion: 2 };
    const buffer = await ExperienceBuffer.open(dir, options);
    const put = await buffer.put([exp("a0", 0), exp("a1", 1), exp("a2", 2), exp("a3", 3)]);
    assertEquals(put, { accepted: 3, rejected: 1, evicted: 0 });
    assertEquals(eids(await buffer.take(2)), ["a1", "a2"]);
    buffer.setPolicyVersion(4);
    await buffer.put([exp("b3", 3), exp("b4", 4)]);
    assertEquals(eids(await buffer.take(1)), ["b3"]);
    assertEquals(buffer.metrics(), {
      size: 1,
      available: 1,
      capacity: 10,
      restored: 0,
      discarded: 0,
      accepted: 5,
      taken: 3,
      droppedStale: 1,
      rejectedFuture: 1,
      evicted: 0,
      // Staleness 1 and 0 at version 2, then 1 at version 4.
      meanStalenessTaken: 2 / 3,
    });
    let error = "";
    try {
      buffer.setPolicyVersion(3);
    } catch (err) {
      error = (err as Error).message;
    }
    assertEquals(
      error,
      "Cannot set the buffer's policy version: expected an integer >= 4, received 3",
    );

    // A restart from an older checkpoint (version 3) rejects b4, now from the future, for good.
    const restarted = await ExperienceBuffer.open(dir, { capacity: 10, policyVersion: 3 });
    assertEquals(restarted.metrics().rejectedFuture, 1);
    assertEquals(restarted.metrics().size, 0);
    const later = await ExperienceBuffer.open(dir, { capacity: 10, policyVersion: 9 });
    assertEquals(later.metrics().size, 0);
  });
});

Deno.test("buffer: replay hands out by linear_decay priority up to max_use_count", async () => {
  await inTempDir("rft-buffer-", async (dir) => {
    const options: ExperienceBufferOptions = {
      capacity: 10,
      policyVersion: 2,
      replay: { maxUseCount: 2 },
    };
    const buffer = await ExperienceBuffer.open(dir, options);
    await buffer.put([exp("a0", 0), exp("a1", 1), exp("a2", 2)]);
    // Priority = version - 0.1 * uses: a2 (2, then 1.9), a1 (1, 0.9), a0 (0, -0.1).
    assertEquals(eids(await buffer.take(2)), ["a2", "a1"]);
    assertEquals(eids(await buffer.take(1)), ["a2"]);
    // a2 is used up; a1 is killed-and-restored with its use count.
    const restored = await ExperienceBuffer.open(dir, options);
    assertEquals(restored.metrics().size, 2);
    assertEquals(eids(await restored.take(1)), ["a1"]);
    assertEquals(eids(await restored.take(1)), ["a0"]);
    await restored.close();
    // After close each experience left is handed out once more at most.
    assertEquals(eids(await restored.take(5)), ["a0"]);
    assertEquals(await restored.take(5), []);
  });
});

Deno.test("buffer: replay evicts the lowest priority over capacity instead of waiting", async () => {
  await inTempDir("rft-buffer-", async (dir) => {
    const options = { capacity: 2, policyVersion: 2, replay: { decay: 1 } };
    const buffer = await ExperienceBuffer.open(dir, options);
    assertEquals(await buffer.put([exp("a1", 1), exp("a2", 2)]), {
      accepted: 2,
      rejected: 0,
      evicted: 0,
    });
    assertEquals(eids(await buffer.take(1)), ["a2"]);
    // a2's priority is now 1, tied with a1; the new b0 (priority 0) is the one evicted.
    assertEquals(await buffer.put([exp("b0", 0)]), { accepted: 1, rejected: 0, evicted: 1 });
    // Equal priorities go in arrival order.
    assertEquals(eids(await buffer.take(2)), ["a1", "a2"]);
    assertEquals(buffer.metrics().evicted, 1);
    const reopened = await ExperienceBuffer.open(dir, options);
    assertEquals(reopened.metrics().size, 2);
    await buffer.close();
  });
});

Deno.test("buffer: replay waits out the reuse cooldown", async () => {
  await inTempDir("rft-buffer-", async (dir) => {
    const buffer = await ExperienceBuffer.open(dir, {
      capacity: 2,
      replay: { reuseCooldownMs: 40 },
    });
    await buffer.put([exp("a0")]);
    assertEquals(eids(await buffer.take(1)), ["a0"]);
    const start = performance.now();
    const again = buffer.take(1);
    assertEquals(buffer.metrics().available, 0);
    assertEquals(eids(await again), ["a0"]);
    assertEquals(performance.now() - start >= 30, true);
    await buffer.close();
  });
});

Deno.test("buffer: bad options, duplicate eids and invalid experiences are errors", async () => {
  await inTempDir("rft-buffer-", async (dir) => {
    await assertRejects(
      () => ExperienceBuffer.open(dir, { capacity: 0 }),
      Error,
      `Invalid experience buffer option "capacity": expected an integer >= 1, received 0`,
    );
    await assertRejects(
      () => ExperienceBuffer.open(dir, { capacity: 1, replay: { maxUseCount: 0 } }),
      Error,
      `"replay.maxUseCount": expected a number >= 1, received 0`,
    );
    const buffer = await ExperienceBuffer.open(dir, { capacity: 4 });
    await buffer.put([exp("a0")]);
    await assertRejects(
      () => buffer.put([exp("a0")]),
      Error,
      "Cannot put experience a0 into the buffer: the eid is already known",
    );
    await assertRejects(
      () => buffer.put([{ ...exp("a1"), reward: NaN }]),
      Error,
      `"reward" is NaN; expected a finite number or null`,
    );
    await Deno.writeTextFile(`${dir}/${BUFFER_STATE_FILE}`, "{}");
    await assertRejects(
      () => ExperienceBuffer.open(dir, { capacity: 4 }),
      Error,
      `Cannot read the buffer state ${dir}/${BUFFER_STATE_FILE}: expected {version: 1`,
    );
    await buffer.close();
  });
});

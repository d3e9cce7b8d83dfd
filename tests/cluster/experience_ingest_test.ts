/**
 * The experience stream end to end in one process, without a GPU: an explorer's parts published
 * twice (a redelivered batch explored again) are stored once; a trainer that stops and starts
 * again on the same buffer and ingest record stores nothing twice; a step counts as done on its
 * completion record, and its metrics reach the trainer once, and again when it resumes from an
 * earlier step.
 */

import { assertEquals } from "../_asserts.ts";
import type { Experience } from "../../src/buffer/experience.ts";
import { ExperienceBuffer } from "../../src/buffer/experience_buffer.ts";
import { ExperienceIngest } from "../../src/cluster/experience_ingest.ts";
import { ExperiencePublisher, PART_BYTES } from "../../src/cluster/experience_publisher.ts";
import { NatsLink } from "../../src/cluster/nats_link.ts";
import type { StepDone } from "../../src/cluster/task_queue.ts";
import { startNatsServer } from "../../bench/_nats_server.ts";
import { inTempDir } from "../_temp_dir.ts";

/** Tokens per experience: a few of them fill one part. */
const LENGTH = 2000;

function exp(eid: string): Experience {
  return {
    tokens: Array.from({ length: LENGTH }, (_, i) => i % 7),
    promptLength: 1,
    actionMask: Array.from({ length: LENGTH }, (_, i) => (i ? 1 : 0)),
    logprobs: Array.from({ length: LENGTH }, (_, i) => (i ? -0.123456789 : 0)),
    reward: 1,
    info: { taskId: eid.split("/")[0], runId: 0, policyVersion: 0, eid },
  };
}

Deno.test("experiences published twice or ingested again after a restart are stored once", async () => {
  await using server = await startNatsServer();
  await inTempDir("rft_ingest_", async (dir) => {
    await using link = await NatsLink.open({
      url: server.url,
      project: "t",
      name: "ingest",
      stage: "main",
      log: () => {},
    });
    const step1 = Array.from({ length: 40 }, (_, i) => exp(`a/${i}`));
    const first = new ExperiencePublisher(link, () => 1);
    assertEquals((await first.put(step1)).accepted, step1.length);
    const stored = await link.jsm.streams.info(link.names.experienceStream);
    // Above NATS's 1 MB payload limit in one message, so sent in parts under PART_BYTES each.
    assertEquals(stored.state.messages > 1, true, `${stored.state.messages} message(s)`);
    assertEquals(stored.state.bytes < stored.state.messages * (PART_BYTES + 1024), true);
    // Explored again by another explorer: other eids, same step, same message ids.
    const again = await first.put(step1.map((_e, i) => exp(`b/${i}`)));
    assertEquals([again.accepted, again.rejected], [0, step1.length]);
    const done: StepDone = { step: 1, explorer: 0, metrics: { "explorer/tasks": 2 } };
    await link.publish(link.names.doneSubject, JSON.stringify(done), "done-1");

    const open = () => ExperienceBuffer.open(`${dir}/experiences`, { capacity: 1000 });
    const seen: StepDone[] = [];
    const options = {
      stateDir: dir,
      ackWaitS: 30,
      log: () => {},
      onStepDone: (d: StepDone) => {
        seen.push(d);
      },
    };
    {
      await using buffer = await open();
      const ingest = await ExperienceIngest.start(link, buffer, options);
      ingest.totalSteps = 2;
      await ingest.untilDone(1);
      await ingest.stop();
      assertEquals(buffer.metrics().size, step1.length);
    }
    // A new trainer process: the consumer goes on where it was; step 2 arrives.
    await new ExperiencePublisher(link, () => 2).put([exp("c/0")]);
    await link.publish(link.names.doneSubject, JSON.stringify({ ...done, step: 2 }), "done-2");
    await using buffer = await open();
    const ingest = await ExperienceIngest.start(link, buffer, options);
    ingest.totalSteps = 2;
    // Resumed from train step 0: step 1's record, read by the first process, is handed on again.
    await ingest.replayDone(0);
    await ingest.untilDone(2);
    await ingest.stop();
    assertEquals(buffer.metrics().size, step1.length + 1);
    assertEquals(ingest.allDone, true);
    assertEquals(seen.map((d) => d.step), [1, 1, 2]);
    assertEquals(seen[0].metrics, { "explorer/tasks": 2 });
  });
});

/**
 * Sample strategies: `default` takes a batch in buffer order, `staleness_control` skips and
 * counts experiences too old for the trainer's version, `mix` splits a batch between rollouts
 * and flagged expert data; bad configs (unknown name or key, out-of-range args, `mix` without an
 * expert buffer) are errors naming what was expected.
 */

import { ALGORITHM_TYPE } from "../../src/algorithm/algorithm_type.ts";
import {
  configureSampleStrategy,
  SAMPLE_STRATEGY,
  type SampleBuffers,
} from "../../src/algorithm/sample_strategy.ts";
import type { Experience } from "../../src/buffer/experience.ts";
import { ExperienceBuffer } from "../../src/buffer/experience_buffer.ts";
import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";

/** Runs `fn` with an experience buffer and an expert buffer in fresh temporary directories. */
async function withBuffers(
  policyVersion: number,
  fn: (buffers: Required<SampleBuffers>) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "rft-sample-" });
  try {
    const experience = await ExperienceBuffer.open(`${dir}/rl`, { capacity: 64, policyVersion });
    const expert = await ExperienceBuffer.open(`${dir}/expert`, { capacity: 64 });
    await fn({ experience, expert });
    await experience.close();
    await expert.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

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

/** `count` experiences named `${prefix}0`, `${prefix}1`, ... */
const exps = (prefix: string, count: number, version = 0) =>
  Array.from({ length: count }, (_, i) => exp(`${prefix}${i}`, version));

Deno.test("sample strategy default: takes exactly batch_size in buffer order", async () => {
  await withBuffers(2, async (buffers) => {
    await buffers.experience.put([...exps("a", 3, 1), ...exps("b", 3, 2)]);
    const { entry, args } = configureSampleStrategy("default", {}, buffers);
    const batch = await entry.sample(buffers, 4, args, { policyVersion: 2 });
    assertEquals(eids(batch.experiences), ["a0", "a1", "a2", "b0"]);
    assertEquals(batch.isExpert, [false, false, false, false]);
    assertEquals(batch.metrics, { "sample/count": 4, "sample/staleness_mean": 0.75 });
    assertEquals(buffers.experience.metrics().available, 2);
  });
});

Deno.test("sample strategy staleness_control: skips stale experiences, counts them", async () => {
  await withBuffers(3, async (buffers) => {
    await buffers.experience.put([
      exp("a", 0),
      exp("b", 2),
      exp("c", 1),
      exp("d", 3),
      exp("e", 3),
      exp("f", 3),
    ]);
    const { entry, args } = configureSampleStrategy("staleness_control", {}, buffers);
    assertEquals(args, { max_staleness: 1 });
    const batch = await entry.sample(buffers, 3, args, { policyVersion: 3 });
    assertEquals(eids(batch.experiences), ["b", "d", "e"]);
    assertEquals(batch.isExpert, [false, false, false]);
    assertEquals(batch.metrics, {
      "sample/count": 3,
      "sample/staleness_mean": 1 / 3,
      "sample/dropped_stale": 2,
    });

    // Once the buffer is closed, what is left: "f" is stale at version 5 with max_staleness 1.
    await buffers.experience.put([exp("g", 3)]);
    const closing = entry.sample(buffers, 3, args, { policyVersion: 5 });
    await buffers.experience.close();
    const rest = await closing;
    assertEquals(eids(rest.experiences), []);
    assertEquals(rest.metrics["sample/dropped_stale"], 2);
  });
});

Deno.test("sample strategy mix: expert_data_ratio of the batch is flagged expert data", async () => {
  await withBuffers(0, async (buffers) => {
    await buffers.experience.put(exps("r", 10));
    await buffers.expert.put(exps("x", 10));
    const { entry, args } = configureSampleStrategy("mix", { expert_data_ratio: 0.25 }, buffers);
    const batch = await entry.sample(buffers, 8, args, { policyVersion: 0 });
    assertEquals(eids(batch.experiences), ["r0", "r1", "r2", "r3", "r4", "r5", "x0", "x1"]);
    assertEquals(batch.isExpert, [false, false, false, false, false, false, true, true]);
    assertEquals(batch.metrics, {
      "sample/count": 8,
      "sample/staleness_mean": 0,
      "sample/expert_count": 2,
      "sample/rl_count": 6,
    });

    // Trinity rounds the expert share up (0.3 of 5 = 1.5 -> 2); 0.1 of 30 stays 3.
    const up = await entry.sample(buffers, 5, { expert_data_ratio: 0.3 }, { policyVersion: 0 });
    assertEquals(up.isExpert, [false, false, false, true, true]);
    await buffers.experience.put(exps("s", 27));
    await buffers.expert.put(exps("y", 3));
    const tenth = await entry.sample(buffers, 30, { expert_data_ratio: 0.1 }, {
      policyVersion: 0,
    });
    assertEquals(tenth.metrics["sample/expert_count"], 3);

    // Ratio 1: expert data only, nothing taken from the experience buffer.
    const before = buffers.experience.metrics().available;
    const all = await entry.sample(buffers, 3, { expert_data_ratio: 1 }, { policyVersion: 0 });
    assertEquals(all.isExpert, [true, true, true]);
    assertEquals(buffers.experience.metrics().available, before);
  });
});

Deno.test("sample strategy: a waiting draw rejects when the signal aborts", async () => {
  await withBuffers(0, async (buffers) => {
    const { entry, args } = configureSampleStrategy("default", {}, buffers);
    const controller = new AbortController();
    const waiting = entry.sample(buffers, 2, args, {
      policyVersion: 0,
      signal: controller.signal,
    });
    controller.abort(new Error("trainer stopped"));
    await assertRejects(() => waiting, Error, "trainer stopped");
  });
});

Deno.test("sample strategy config errors name what was expected", async () => {
  await withBuffers(0, async ({ experience, expert }) => {
    const buffers = { experience, expert };
    assertThrows(
      () => configureSampleStrategy("mixx", {}, buffers),
      Error,
      'Unknown sample strategy "mixx"; known: default, mix, staleness_control, warmup. ' +
        'Did you mean "mix"?',
    );
    assertThrows(
      () => configureSampleStrategy("mix", { expert_ratio: 0.5 }, buffers),
      Error,
      'Cannot configure sample strategy "mix": unknown key "expert_ratio"; ' +
        "known: expert_data_ratio",
    );
    assertThrows(
      () => configureSampleStrategy("mix", { expert_data_ratio: 1.5 }, buffers),
      Error,
      'Cannot configure sample strategy "mix": key "expert_data_ratio" expected a number in ' +
        "[0, 1], received 1.5",
    );
    assertThrows(
      () => configureSampleStrategy("staleness_control", { max_staleness: -1 }, buffers),
      Error,
      'key "max_staleness" expected a number in [0, Infinity], received -1',
    );
    assertThrows(
      () => configureSampleStrategy("mix", {}, { experience }),
      Error,
      'Cannot use sample strategy "mix": expected an expert buffer (the SFT data to mix in), ' +
        "found none",
    );
    const { entry, args } = configureSampleStrategy("mix", {}, buffers);
    await assertRejects(
      () => entry.sample({ experience }, 4, args, { policyVersion: 0 }),
      Error,
      'Cannot use sample strategy "mix": expected an expert buffer',
    );
  });
});

Deno.test("every algorithm type names a registered sample strategy", () => {
  for (const name of ALGORITHM_TYPE.names()) {
    const strategy = ALGORITHM_TYPE.get(name).defaultConfig.sampleStrategy;
    assertEquals(SAMPLE_STRATEGY.has(strategy), true, `${name}: ${strategy}`);
  }
});

import { assertEquals } from "../_asserts.ts";
import { cursorForVersion, type ExplorerState } from "../../src/explorer/explorer.ts";

const taskset = (position: number) =>
  ({ epoch: 0, position }) as unknown as ExplorerState["taskset"];

Deno.test("cursorForVersion rewinds to the last step that sampled no version past the checkpoint", () => {
  // Steps 1..5 sampled versions 0..4 (explore step s samples version s - 1).
  const history = [1, 2, 3, 4, 5].map((step) => ({
    step,
    taskset: taskset(step * 2),
    policyVersion: step - 1,
  }));
  const state: ExplorerState = { ...history[4], history };
  const rewound = cursorForVersion(state, 2); // trainer checkpoint at step 2
  assertEquals(rewound.step, 3);
  assertEquals(rewound.taskset, taskset(6));
  assertEquals(rewound.history!.map((c) => c.step), [1, 2, 3]);
  assertEquals(cursorForVersion(state, 9).step, 5); // nothing newer: unchanged
  const legacy = { step: 5, taskset: taskset(10) };
  assertEquals(cursorForVersion(legacy, 0), legacy); // an old file without history
});

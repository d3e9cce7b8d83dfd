import { Notifier } from "../../src/util/notifier.ts";
import { assertEquals, assertRejects } from "../_asserts.ts";
import { isSettled } from "../_settled.ts";

Deno.test("Notifier: notify wakes every waiter once; later waiters wait for the next notify", async () => {
  const n = new Notifier();
  const a = n.changed();
  const b = n.changed();
  assertEquals(n.waiting, 2);
  assertEquals(await isSettled(a), false);
  n.notify();
  assertEquals([await isSettled(a), await isSettled(b)], [true, true]);
  assertEquals(n.waiting, 0);
  const c = n.changed();
  assertEquals(await isSettled(c), false);
  n.notify();
  assertEquals(await isSettled(c), true);
});

Deno.test("Notifier: until re-checks its condition at each notify", async () => {
  const n = new Notifier();
  let value = 0;
  const reached = n.until(() => value >= 2);
  value = 1;
  n.notify();
  assertEquals(await isSettled(reached), false);
  value = 2;
  n.notify();
  assertEquals(await isSettled(reached), true);
  // Already true: resolves without a notify.
  assertEquals(await isSettled(n.until(() => true)), true);
});

Deno.test("Notifier: an abort rejects the wait with the signal's reason and unparks it", async () => {
  const n = new Notifier();
  const controller = new AbortController();
  const wait = n.until(() => false, controller.signal);
  assertEquals(await isSettled(wait), false);
  controller.abort(new Error("stopped by test"));
  await assertRejects(() => wait, Error, "stopped by test");
  assertEquals(n.waiting, 0);
  await assertRejects(() => n.changed(controller.signal), Error, "stopped by test");
});

/** Test helper: whether a promise has settled once the tasks already queued have run. */

/** Whether `promise` has settled after pending tasks ran (a macrotask later). */
export async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(() => settled = true, () => settled = true);
  await new Promise((resolve) => setTimeout(resolve, 0));
  return settled;
}

import { assertEquals } from "../_asserts.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { BufferPool, sizeClass } from "../../src/gpu/buffer_pool.ts";

Deno.test("size classes round up: powers of two below 1 MiB, 1/8 steps above", () => {
  assertEquals(sizeClass(1), 256);
  assertEquals(sizeClass(257), 512);
  assertEquals(sizeClass(1000), 1024);
  assertEquals(sizeClass(1 << 20), 1 << 20);
  assertEquals(sizeClass((1 << 20) + 1), (1 << 20) + (1 << 17));
  assertEquals(sizeClass(3_000_000), 3_145_728);
});

Deno.test("a released buffer is handed out again for the same size class", async () => {
  const { device } = await getGpu();
  const pool = new BufferPool(device);
  const a = pool.acquire(1000, "a");
  const b = pool.acquire(900, "b");
  assertEquals(a === b, false);
  pool.release(a);
  const c = pool.acquire(600, "c");
  assertEquals(c, a);
  assertEquals(pool.allocatedBytes, 2048);
  pool.release(b);
  pool.release(c);
  pool.trim();
  assertEquals(pool.allocatedBytes, 0);
});

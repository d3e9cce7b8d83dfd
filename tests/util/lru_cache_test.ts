import { LruCache } from "../../src/util/lru_cache.ts";
import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";

function recordingCache(capacity: number) {
  const disposed: string[] = [];
  const cache = new LruCache<string>(capacity, (value, key) => disposed.push(`${key}=${value}`));
  return { cache, disposed };
}

Deno.test("LruCache: making room drops the least recently used entry, before creating", async () => {
  const { cache, disposed } = recordingCache(2);
  await cache.getOrCreate("a", () => "A");
  await cache.getOrCreate("b", () => "B");
  assertEquals(cache.get("a"), "A"); // now b is the least recently used
  let seenAtCreate: string[] = [];
  await cache.getOrCreate("c", () => {
    seenAtCreate = [...disposed];
    return "C";
  });
  assertEquals(seenAtCreate, ["b=B"]);
  assertEquals([cache.get("b"), cache.get("a"), cache.get("c")], [undefined, "A", "C"]);
  assertEquals(cache.size, 2);
});

Deno.test("LruCache: a held key is not created again, and a failed create adds nothing", async () => {
  const { cache, disposed } = recordingCache(3);
  let creates = 0;
  const make = () => `v${++creates}`;
  assertEquals(await cache.getOrCreate("k", make), "v1");
  assertEquals(await cache.getOrCreate("k", make), "v1");
  assertEquals(creates, 1);
  await assertRejects(
    () => cache.getOrCreate("bad", () => Promise.reject(new Error("no"))),
    Error,
    "no",
  );
  assertEquals(cache.size, 1);
  assertEquals(disposed, []);
});

Deno.test("LruCache: concurrent callers of one key share one creation", async () => {
  const { cache, disposed } = recordingCache(2);
  let creates = 0;
  const slow = async () => {
    creates++;
    await new Promise((resolve) => setTimeout(resolve, 5));
    return `v${creates}`;
  };
  const values = await Promise.all([cache.getOrCreate("k", slow), cache.getOrCreate("k", slow)]);
  assertEquals(values, ["v1", "v1"]);
  assertEquals([creates, cache.size, disposed.length], [1, 1, 0]);
});

Deno.test("LruCache: deleteWhere and clear dispose what they drop", async () => {
  const { cache, disposed } = recordingCache(4);
  for (const k of ["x1", "y1", "x2"]) await cache.getOrCreate(k, () => k.toUpperCase());
  cache.deleteWhere((_, key) => key.startsWith("x"));
  assertEquals(disposed, ["x1=X1", "x2=X2"]);
  assertEquals(cache.delete("x1"), false);
  cache.clear();
  assertEquals(disposed, ["x1=X1", "x2=X2", "y1=Y1"]);
  assertEquals(cache.size, 0);
  assertThrows(() => new LruCache(0, () => {}), Error, "expected a capacity >= 1, received 0");
});

import {
  type F32Tensor,
  INDEX_FILE,
  openCheckpoint,
  SafetensorsFile,
  SINGLE_FILE,
  writeCheckpoint,
  writeSafetensors,
} from "../../src/model/safetensors.ts";
import { assertEquals, assertRejects, assertThrows } from "../_asserts.ts";
import { inTempDir } from "../_temp_dir.ts";
import { toBf16 } from "../../src/util/half.ts";

/** Writes a safetensors file by hand: any header (object or raw text) and data bytes. */
async function craft(path: string, header: unknown, data = new Uint8Array(0), length?: number) {
  const json = new TextEncoder().encode(
    typeof header === "string" ? header : JSON.stringify(header),
  );
  const bytes = new Uint8Array(8 + json.length + data.length);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(length ?? json.length), true);
  bytes.set(json, 8);
  bytes.set(data, 8 + json.length);
  await Deno.writeFile(path, bytes);
}

function bytesOf(data: Float32Array): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** Tensors with awkward values (NaN payload, -0, subnormal, inf) and shapes (scalar, empty). */
/** A tensor of host values (the writers also take ones read when written). */
type HostTensor = F32Tensor & { data: Float32Array };

function sampleTensors(): HostTensor[] {
  const special = new Float32Array(7);
  new Uint32Array(special.buffer).set([0x7fc00001, 0x80000000, 0x00000001, 0x7f800000]);
  special.set([-1.5, 3.4028234663852886e38, 1e-30], 4);
  const ramp = Float32Array.from({ length: 3 * 5 }, (_, i) => i / 7 - 1);
  return [
    { name: "special", shape: [7], data: special },
    { name: "model.layers.0.weight", shape: [3, 5], data: ramp },
    { name: "scalar", shape: [], data: new Float32Array([42]) },
    { name: "empty", shape: [0, 4], data: new Float32Array(0) },
    { name: "tail", shape: [2, 2, 3], data: ramp.slice(0, 12) },
  ];
}

async function assertSameTensors(dir: string, tensors: readonly HostTensor[]) {
  const checkpoint = await openCheckpoint(dir);
  assertEquals(checkpoint.names.sort(), tensors.map((t) => t.name).sort());
  for (const t of tensors) {
    const info = checkpoint.info(t.name);
    assertEquals([info.dtype, info.shape], ["F32", t.shape], t.name);
    assertEquals(await checkpoint.read(t.name), bytesOf(t.data), t.name);
  }
}

Deno.test("safetensors: a written file reads back bit-identical with HF's header layout", async () => {
  await inTempDir("rft-safetensors-", async (dir) => {
    const path = `${dir}/one.safetensors`;
    const tensors = sampleTensors();
    await writeSafetensors(path, tensors);
    const raw = await Deno.readFile(path);
    const headerLength = Number(new DataView(raw.buffer).getBigUint64(0, true));
    assertEquals(headerLength % 8, 0);
    const headerText = new TextDecoder().decode(raw.subarray(8, 8 + headerLength));
    assertEquals(headerText.startsWith('{"__metadata__":{"format":"pt"}'), true);
    assertEquals(headerText.trimEnd().endsWith("}"), true);
    const file = await SafetensorsFile.open(path);
    assertEquals(file.metadata, { format: "pt" });
    for (const t of tensors) assertEquals(await file.read(t.name), bytesOf(t.data), t.name);
    assertEquals([...Deno.readDirSync(dir)].length, 1, "no temporary file is left behind");
  });
});

Deno.test("safetensors: a checkpoint round-trips as one file and as shards with an index", async () => {
  await inTempDir("rft-safetensors-", async (dir) => {
    const tensors = sampleTensors();
    assertEquals(await writeCheckpoint(dir, tensors), [SINGLE_FILE]);
    await assertSameTensors(dir, tensors);

    // 28 + 60 + 4 + 0 + 48 bytes in shards of at most 64: [special], [ramp, scalar, empty], [tail].
    const written = await writeCheckpoint(dir, tensors, { maxShardBytes: 64 });
    const shards = [1, 2, 3].map((i) => `model-0000${i}-of-00003.safetensors`);
    assertEquals(written, [...shards, INDEX_FILE]);
    const index = JSON.parse(await Deno.readTextFile(`${dir}/${INDEX_FILE}`));
    assertEquals(index.metadata, { total_size: 140 });
    assertEquals(index.weight_map, {
      "empty": shards[1],
      "model.layers.0.weight": shards[1],
      "scalar": shards[1],
      "special": shards[0],
      "tail": shards[2],
    });
    const entries = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assertEquals(entries, [INDEX_FILE, ...shards].sort(), "the stale single file is removed");
    await assertSameTensors(dir, tensors);

    await writeCheckpoint(dir, tensors.slice(0, 2), { maxShardBytes: 1000 });
    assertEquals(await Deno.stat(`${dir}/${INDEX_FILE}`).catch(() => "gone"), "gone");
    await assertSameTensors(dir, tensors.slice(0, 2));
  });
});

Deno.test("safetensors: writing rejects a duplicate name and data that does not fit the shape", async () => {
  await inTempDir("rft-safetensors-", async (dir) => {
    const t = { name: "w", shape: [2, 3], data: new Float32Array(5) };
    await assertRejects(
      () => writeSafetensors(`${dir}/a.safetensors`, [t]),
      Error,
      `tensor "w" has 5 values; shape [2,3] needs 6`,
    );
    const ok = { ...t, data: new Float32Array(6) };
    await assertRejects(
      () => writeSafetensors(`${dir}/a.safetensors`, [ok, ok]),
      Error,
      `tensor name "w" is used twice`,
    );
    assertEquals([...Deno.readDirSync(dir)].length, 0);
  });
});

Deno.test("safetensors: a tensor given in pieces is written whole; too few or too many values are refused", async () => {
  await inTempDir("rft-safetensors-", async (dir) => {
    const values = Float32Array.from({ length: 9 }, (_, i) => i / 3);
    async function* pieces(...sizes: number[]) {
      let first = 0;
      for (const n of sizes) yield values.slice(first, first += n);
    }
    const path = `${dir}/p.safetensors`;
    await writeSafetensors(path, [{ name: "w", shape: [7], data: () => pieces(3, 3, 1) }]);
    const file = await SafetensorsFile.open(path);
    assertEquals(new Float32Array((await file.read("w")).slice().buffer), values.subarray(0, 7));
    for (const [sizes, found] of [[[3, 3], "6"], [[3, 3, 3], "more than 7"]] as const) {
      await assertRejects(
        () =>
          writeSafetensors(`${dir}/q.safetensors`, [{
            name: "w",
            shape: [7],
            data: () => pieces(...sizes),
          }]),
        Error,
        `tensor "w" has ${found} values; shape [7] needs 7`,
      );
    }
    assertEquals([...Deno.readDirSync(dir)].map((e) => e.name), ["p.safetensors"]);
  });
});

const F32x3 = { dtype: "F32", shape: [3], data_offsets: [0, 12] };
const CORRUPT: [string, (path: string) => Promise<void>, string][] = [
  ["shorter than the length prefix", (p) => Deno.writeFile(p, new Uint8Array(5)), "has 5 bytes"],
  ["a header longer than the file", (p) => craft(p, { w: F32x3 }, undefined, 9999), "exceeds"],
  ["a header that is not JSON", (p) => craft(p, '{"w": {'), "header is not valid JSON"],
  ["a header that is an array", (p) => craft(p, "[1, 2]"), "header is not a JSON object"],
  [
    "an unknown dtype",
    (p) => craft(p, { w: { ...F32x3, dtype: "I9" } }, new Uint8Array(12)),
    `tensor "w" has dtype "I9"; expected one of BOOL`,
  ],
  [
    "a bad shape",
    (p) => craft(p, { w: { ...F32x3, shape: [-3] } }, new Uint8Array(12)),
    `tensor "w" has shape [-3]`,
  ],
  [
    "offsets that do not match the shape",
    (p) => craft(p, { w: { ...F32x3, data_offsets: [0, 8] } }, new Uint8Array(12)),
    `tensor "w" spans 8 bytes; F32 shape [3] needs 12`,
  ],
  [
    "reversed offsets",
    (p) => craft(p, { w: { ...F32x3, data_offsets: [12, 0] } }, new Uint8Array(12)),
    `tensor "w" has data_offsets [12,0]`,
  ],
  [
    "truncated data",
    (p) => craft(p, { w: F32x3 }, new Uint8Array(10)),
    `file is truncated: tensor "w" ends at data byte 12 but the file has 10 data bytes`,
  ],
  [
    "overlapping tensors",
    (p) => craft(p, { a: F32x3, b: { ...F32x3, data_offsets: [8, 20] } }, new Uint8Array(20)),
    `tensors "a" and "b" overlap`,
  ],
  [
    "metadata that is not strings",
    (p) => craft(p, { __metadata__: { format: 1 } }),
    `"__metadata__" is {"format":1}`,
  ],
];

for (const [what, make, message] of CORRUPT) {
  Deno.test(`safetensors: a file with ${what} is rejected`, async () => {
    await inTempDir("rft-safetensors-", async (dir) => {
      const path = `${dir}/bad.safetensors`;
      await make(path);
      await assertRejects(() => SafetensorsFile.open(path), Error, `Cannot load ${path}: `);
      await assertRejects(() => SafetensorsFile.open(path), Error, message);
    });
  });
}

Deno.test("safetensors: missing files and tensors, and files cut short after opening", async () => {
  await inTempDir("rft-safetensors-", async (dir) => {
    await assertRejects(() => openCheckpoint(dir), Error, `found neither ${SINGLE_FILE} nor`);
    await assertRejects(
      () => SafetensorsFile.open(`${dir}/nope`),
      Error,
      `Cannot load ${dir}/nope`,
    );
    await writeCheckpoint(dir, sampleTensors());
    const checkpoint = await openCheckpoint(dir);
    assertThrows(() => checkpoint.info("nope"), Error, `Cannot read tensor "nope" from ${dir}`);
    await assertRejects(
      () => checkpoint.read("model.layers.1.weight"),
      Error,
      `Cannot read tensor "model.layers.1.weight" from ${dir}: no such tensor (it has 5, e.g. "special"`,
    );
    const path = `${dir}/${SINGLE_FILE}`;
    await Deno.truncate(path, (await Deno.stat(path)).size - 4);
    await assertRejects(
      () => checkpoint.read("tail"),
      Error,
      "file is truncated: expected 48 bytes",
    );
  });
});

const INDEX_ERRORS: [string, unknown, string][] = [
  ["not JSON", "{", "not valid JSON"],
  ["no weight_map", { metadata: {} }, `"weight_map" is missing or not an object`],
  ["a path outside the directory", { weight_map: { a: "../a.safetensors" } }, `entry "a" is`],
  [
    "a missing shard",
    { weight_map: { a: "a.safetensors", b: "model-00002-of-00002.safetensors" } },
    `shard "model-00002-of-00002.safetensors" (holding "b") is missing`,
  ],
  ["a shard without the tensor", { weight_map: { c: "a.safetensors" } }, `has no tensor "c"`],
];

for (const [what, index, message] of INDEX_ERRORS) {
  Deno.test(`safetensors: an index with ${what} is rejected`, async () => {
    await inTempDir("rft-safetensors-", async (dir) => {
      await writeSafetensors(
        `${dir}/a.safetensors`,
        sampleTensors().slice(0, 1).map((t) => ({
          ...t,
          name: "a",
        })),
      );
      const text = typeof index === "string" ? index : JSON.stringify(index);
      await Deno.writeTextFile(`${dir}/${INDEX_FILE}`, text);
      await assertRejects(() => openCheckpoint(dir), Error, `Cannot load ${dir}/${INDEX_FILE}: `);
      await assertRejects(() => openCheckpoint(dir), Error, message);
    });
  });
}

Deno.test("writeSafetensors writes BF16 as the Hub ships it, one tensor made at a time", async () => {
  await inTempDir("rft-bf16-", async (dir) => {
    const tensors = sampleTensors();
    const made: string[] = [];
    // Getters: each tensor's data is made when the writer reaches it, in order.
    const lazy = tensors.map((t) => ({
      name: t.name,
      shape: t.shape,
      get data() {
        made.push(t.name);
        return t.data;
      },
    }));
    await writeCheckpoint(dir, lazy, { dtype: "BF16" });
    assertEquals(made, tensors.map((t) => t.name));
    const checkpoint = await openCheckpoint(dir);
    for (const t of tensors) {
      assertEquals(checkpoint.info(t.name).dtype, "BF16");
      const expected = new Uint8Array(toBf16(t.data).buffer);
      assertEquals(await checkpoint.read(t.name), expected, t.name);
    }
  });
});

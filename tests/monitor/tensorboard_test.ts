import { assertEquals, assertRejects } from "../_asserts.ts";
import { crc32c, maskedCrc32c } from "../../src/monitor/crc32c.ts";
import {
  EVENT_FILE_VERSION,
  readEvents,
  TensorBoardWriter,
} from "../../src/monitor/tensorboard.ts";

Deno.test("crc32c matches the Castagnoli check value", () => {
  const bytes = new TextEncoder().encode("123456789");
  assertEquals(crc32c(bytes), 0xe3069283);
  assertEquals(crc32c(new Uint8Array()), 0);
  const crc = 0xe3069283;
  assertEquals(maskedCrc32c(bytes), ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0);
});

async function writeSample(dir: string) {
  const writer = await TensorBoardWriter.open(`${dir}/tensorboard`, 1700000000.25);
  await writer.writeScalars(1, { "actor/loss": 0.5, "eval/gsm8k/accuracy": 0.25 }, 1700000001);
  await writer.writeScalars(2, { "actor/loss": 0.1, "actor/kl": NaN }, 1700000002.5);
  writer.close();
  return writer.path;
}

Deno.test("TensorBoard events round-trip: file version, steps, tags, float32 values", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rft_tb_" });
  try {
    const path = await writeSample(dir);
    assertEquals(path, `${dir}/tensorboard/events.out.tfevents.1700000000.${Deno.hostname()}`);
    assertEquals(await readEvents(path), {
      fileVersion: EVENT_FILE_VERSION,
      events: [
        {
          step: 1,
          wallTime: 1700000001,
          scalars: { "actor/loss": 0.5, "eval/gsm8k/accuracy": 0.25 },
        },
        {
          step: 2,
          wallTime: 1700000002.5,
          scalars: { "actor/loss": Math.fround(0.1), "actor/kl": NaN },
        },
      ],
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readEvents reports a CRC error for a corrupted byte", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rft_tb_" });
  try {
    const path = await writeSample(dir);
    const bytes = await Deno.readFile(path);
    bytes[bytes.length - 10] ^= 0xff; // inside the last record's data
    await Deno.writeFile(path, bytes);
    await assertRejects(() => readEvents(path), Error, "record 2 at byte");
    await assertRejects(() => readEvents(path), Error, "data CRC mismatch");
    bytes[bytes.length - 10] ^= 0xff;
    bytes[3] ^= 0x01; // the first record's length
    await Deno.writeFile(path, bytes);
    await assertRejects(() => readEvents(path), Error, "length CRC mismatch");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * A native TensorBoard event-file writer (no TensorFlow): TFRecords of `Event` protobufs holding
 * scalar summaries, plus a checking reader for tests. Only scalars (`simple_value`); no
 * histograms, images or text, and no file rotation.
 *
 * TFRecord: u64 length (LE), masked CRC32C of those 8 bytes, data, masked CRC32C of the data.
 * Event { wall_time = 1 (double), step = 2 (int64), file_version = 3 (string), summary = 5 }
 * Summary { value = 1 (repeated Value { tag = 1 (string), simple_value = 2 (float) }) }
 */

import { ProtoWriter } from "../util/protobuf_writer.ts";
import { protoFields } from "../util/protobuf_reader.ts";
import { AppendFile } from "./append_file.ts";
import { maskedCrc32c } from "./crc32c.ts";

/** The version string TensorBoard expects in the first event of a file. */
export const EVENT_FILE_VERSION = "brain.Event:2";

/** Writes scalar events to `<dir>/events.out.tfevents.<unix>.<host>`. */
export class TensorBoardWriter {
  private constructor(private readonly file: AppendFile) {}

  /** The event file's path. */
  get path(): string {
    return this.file.path;
  }

  /** Creates `dir` if needed and opens a new event file (appends when the name exists). */
  static async open(dir: string, wallTime = Date.now() / 1000): Promise<TensorBoardWriter> {
    await Deno.mkdir(dir, { recursive: true });
    const name = `events.out.tfevents.${Math.floor(wallTime)}.${Deno.hostname()}`;
    const writer = new TensorBoardWriter(await AppendFile.open(`${dir}/${name}`));
    if (writer.file.initialSize === 0) {
      await writer.#write(new ProtoWriter().double(1, wallTime).string(3, EVENT_FILE_VERSION));
    }
    return writer;
  }

  /** Writes one event holding `scalars` (tag -> value) at `step`. */
  writeScalars(
    step: number,
    scalars: Record<string, number>,
    wallTime = Date.now() / 1000,
  ): Promise<void> {
    const event = new ProtoWriter().double(1, wallTime).varint(2, step).message(5, (summary) => {
      for (const [tag, value] of Object.entries(scalars)) {
        summary.message(1, (v) => v.string(1, tag).float(2, value));
      }
    });
    return this.#write(event);
  }

  /** Closes the file. */
  close(): void {
    this.file.close();
  }

  #write(event: ProtoWriter): Promise<void> {
    const data = event.finish();
    const record = new Uint8Array(data.length + 16);
    const view = new DataView(record.buffer);
    view.setBigUint64(0, BigInt(data.length), true);
    view.setUint32(8, maskedCrc32c(record.subarray(0, 8)), true);
    record.set(data, 12);
    view.setUint32(12 + data.length, maskedCrc32c(data), true);
    return this.file.append(record);
  }
}

/** One scalar event read back: its step, wall time and tag -> value (rounded to float32). */
export interface ScalarEvent {
  step: number;
  wallTime: number;
  scalars: Record<string, number>;
}

/** What `readEvents` found: the file version of the first event and the scalar events. */
export interface EventFile {
  fileVersion: string | undefined;
  events: ScalarEvent[];
}

/** Reads an event file, checking both CRCs of every record; throws naming the bad record. */
export async function readEvents(path: string): Promise<EventFile> {
  const bytes = await Deno.readFile(path);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const result: EventFile = { fileVersion: undefined, events: [] };
  for (let pos = 0, index = 0; pos < bytes.length; index++) {
    const fail = (why: string) => {
      throw new Error(`Cannot read ${path}: record ${index} at byte ${pos}: ${why}`);
    };
    if (pos + 12 > bytes.length) fail("truncated header");
    if (view.getUint32(pos + 8, true) !== maskedCrc32c(bytes.subarray(pos, pos + 8))) {
      fail("length CRC mismatch");
    }
    const length = Number(view.getBigUint64(pos, true));
    const end = pos + 12 + length;
    if (end + 4 > bytes.length) fail(`truncated data (${length} bytes announced)`);
    const data = bytes.subarray(pos + 12, end);
    if (view.getUint32(end, true) !== maskedCrc32c(data)) fail("data CRC mismatch");
    const event = decodeEvent(data);
    if (index === 0) result.fileVersion = event.fileVersion;
    const { step, wallTime, scalars } = event;
    if (scalars) result.events.push({ step, wallTime, scalars });
    pos = end + 4;
  }
  return result;
}

/** The Event fields rft writes; `scalars` is set only when the event has a summary. */
interface DecodedEvent {
  step: number;
  wallTime: number;
  fileVersion?: string;
  scalars?: Record<string, number>;
}

function decodeEvent(data: Uint8Array): DecodedEvent {
  const event: DecodedEvent = { step: 0, wallTime: 0 };
  for (const f of protoFields(data)) {
    if (f.field === 1 && f.wireType === 1) event.wallTime = dataView(f.bytes).getFloat64(0, true);
    else if (f.field === 2 && f.wireType === 0) event.step = f.value;
    else if (f.field === 3 && f.wireType === 2) {
      event.fileVersion = new TextDecoder().decode(f.bytes);
    } else if (f.field === 5 && f.wireType === 2) event.scalars = decodeSummary(f.bytes);
  }
  return event;
}

/** Summary -> tag -> simple_value. */
function decodeSummary(data: Uint8Array): Record<string, number> {
  const scalars: Record<string, number> = {};
  for (const value of protoFields(data)) {
    if (value.field !== 1 || value.wireType !== 2) continue;
    let tag = "";
    let simple = NaN;
    for (const f of protoFields(value.bytes)) {
      if (f.field === 1 && f.wireType === 2) tag = new TextDecoder().decode(f.bytes);
      else if (f.field === 2 && f.wireType === 5) simple = dataView(f.bytes).getFloat32(0, true);
    }
    scalars[tag] = simple;
  }
  return scalars;
}

function dataView(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

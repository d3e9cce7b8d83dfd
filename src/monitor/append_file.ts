/**
 * A file that grows by whole records: each record goes out in one write and is synced before the
 * next, so a killed process leaves at most a partial last record. No buffering, no rotation.
 */

/** An append-only file of records (JSON lines, TFRecords). */
export class AppendFile {
  private constructor(
    /** Where the file lives. */
    readonly path: string,
    /** Its size in bytes when it was opened (0 for a new file). */
    readonly initialSize: number,
    private readonly file: Deno.FsFile,
  ) {}

  /** Opens `path` for appending, creating it when missing. */
  static async open(path: string): Promise<AppendFile> {
    const file = await Deno.open(path, { append: true, create: true });
    return new AppendFile(path, (await file.stat()).size, file);
  }

  /** Appends `record` whole and syncs it to disk. */
  async append(record: Uint8Array): Promise<void> {
    for (let done = 0; done < record.length;) done += await this.file.write(record.subarray(done));
    await this.file.syncData();
  }

  /** Closes the file. */
  close(): void {
    this.file.close();
  }
}

/**
 * The explorer's experience sink across processes: each explore step's kept experiences go to
 * the run's experience stream as JSON rows, in parts of at most {@link PART_BYTES} (NATS refuses
 * messages above its `max_payload`, 1 MB by default), message id `exp-<step>-<part>` (the step of
 * the batch the explorer claimed). A batch explored again after its first explorer died
 * publishes the same ids, which the server drops as duplicates: a step's experiences are stored
 * once. (An explorer killed between two parts of one step leaves that step with the first parts
 * of one exploration and the later ones of the next: no experience twice, but the step may hold
 * more or fewer than one exploration kept.) `put` resolves when the server has stored every part.
 */

import { type Experience, type ExperienceRow, experienceToRow } from "../buffer/experience.ts";
import type { PutResult } from "../buffer/experience_buffer.ts";
import type { ExperienceSink } from "../explorer/explorer.ts";
import type { NatsLink } from "./nats_link.ts";

/** Bytes of JSON rows per message, at most (a single larger row goes alone). */
export const PART_BYTES = 512 * 1024;

/** One part of a step's experiences (subject `exp.batch`). */
export interface ExperiencePart {
  step: number;
  part: number;
  rows: ExperienceRow[];
}

/** Publishes experiences of the step `step()` names (see the file comment). */
export class ExperiencePublisher implements ExperienceSink {
  constructor(readonly link: NatsLink, readonly step: () => number) {}

  async put(exps: readonly Experience[]): Promise<PutResult> {
    const step = this.step();
    let accepted = 0;
    const parts = splitRows(exps.map(experienceToRow));
    for (const [part, rows] of parts.entries()) {
      const message: ExperiencePart = { step, part, rows };
      const ack = await this.link.publish(
        this.link.names.batchSubject,
        JSON.stringify(message),
        `exp-${step}-${part}`,
      );
      if (!ack.duplicate) accepted += rows.length;
    }
    return { accepted, rejected: exps.length - accepted, evicted: 0 };
  }
}

/** `rows` in order, cut into runs of at most {@link PART_BYTES} of JSON each. */
function splitRows(rows: readonly ExperienceRow[]): ExperienceRow[][] {
  const parts: ExperienceRow[][] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = JSON.stringify(row).length + 1;
    if (!parts.length || bytes + size > PART_BYTES) parts.push([]), bytes = 0;
    parts.at(-1)!.push(row);
    bytes += size;
  }
  return parts;
}

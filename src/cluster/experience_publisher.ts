/**
 * The explorer's experience sink across processes: each explore step's kept experiences go to
 * the run's experience stream as JSON rows, in parts of at most {@link PART_SIZE} experiences,
 * message id `exp-<step>-<part>` (the step of the batch the explorer claimed). A batch explored
 * again after its first explorer died publishes the same ids, which the server drops as
 * duplicates: a step's experiences are stored once. `put` resolves when the server has stored
 * every part.
 */

import { type Experience, type ExperienceRow, experienceToRow } from "../buffer/experience.ts";
import type { PutResult } from "../buffer/experience_buffer.ts";
import type { ExperienceSink } from "../explorer/explorer.ts";
import type { NatsLink } from "./nats_link.ts";

/** Experiences per message (keeps a message well under NATS's 1 MB default payload limit). */
export const PART_SIZE = 64;

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
    for (let first = 0, part = 0; first < exps.length; first += PART_SIZE, part++) {
      const rows = exps.slice(first, first + PART_SIZE).map(experienceToRow);
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

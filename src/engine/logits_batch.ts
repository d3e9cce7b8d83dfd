/**
 * The logits processors of one engine batch on the host side: the per-slot bias rows (OpenAI's
 * `logit_bias`, plus -inf on the tokens a slot's {@link TokenConstraint} forbids next), the
 * frequency / presence penalties, and the GPU buffers the batch's graphs read them from. A
 * constrained batch rewrites its bias before every step from the tokens read back after the
 * last one; an unconstrained one writes it once. The ops are in `logits_processor.ts`.
 */

import { TENSOR_USAGE } from "../gpu/buffer_pool.ts";
import type { Variable } from "../graph/tensor.ts";
import { PENALTIES_WIDTH } from "./logits_processor.ts";
import { hasToken, type TokenConstraint } from "./token_constraint.ts";

/** What one request asks of the logits processors. */
export interface LogitsOptions {
  /** Subtracted per earlier occurrence of a token in the sample (OpenAI, -2 to 2). Default 0. */
  frequencyPenalty?: number;
  /** Subtracted once from every token already in the sample (OpenAI, -2 to 2). Default 0. */
  presencePenalty?: number;
  /** Added to the logits of these token ids (OpenAI's `logit_bias`, -100 to 100). */
  logitBias?: Readonly<Record<number, number>>;
  /** A fresh constraint per sample: only the tokens it allows are sampled. */
  constraint?: () => TokenConstraint;
}

/** Whether any of `requests` needs the logits processors. */
export function needsLogitsProcessing(requests: readonly LogitsOptions[]): boolean {
  return requests.some((r) =>
    (r.frequencyPenalty ?? 0) !== 0 || (r.presencePenalty ?? 0) !== 0 ||
    Object.keys(r.logitBias ?? {}).length > 0 || r.constraint !== undefined
  );
}

/** The processors' state of one batch of `slots` samples over a vocabulary of `vocab`. */
export class LogitsBatch {
  /** [slots, vocab] f32, fed to the graphs' bias input. */
  readonly bias: GPUBuffer;
  /** [slots, 2] f32, fed to the graphs' penalties input. */
  readonly penalties: GPUBuffer;
  readonly #base: Float32Array<ArrayBuffer>;
  readonly #constraints: (TokenConstraint | undefined)[];
  /** Tokens of each slot already given to its constraint. */
  readonly #accepted: number[];

  /** `slotRequest[s]`: the request of slot `s`. */
  constructor(
    readonly device: GPUDevice,
    requests: readonly LogitsOptions[],
    slotRequest: readonly number[],
    readonly vocab: number,
  ) {
    const slots = slotRequest.length;
    this.#base = new Float32Array(slots * vocab);
    const penalties = new Float32Array(slots * PENALTIES_WIDTH);
    slotRequest.forEach((r, s) => {
      const { frequencyPenalty = 0, presencePenalty = 0, logitBias = {} } = requests[r];
      penalties.set([frequencyPenalty, presencePenalty], s * PENALTIES_WIDTH);
      for (const [id, value] of Object.entries(logitBias)) {
        if (Number(id) < vocab) this.#base[s * vocab + Number(id)] = value;
      }
    });
    this.#constraints = slotRequest.map((r) => requests[r].constraint?.());
    this.#accepted = slotRequest.map(() => 0);
    const buffer = (data: Float32Array<ArrayBuffer>) => {
      const b = device.createBuffer({ size: data.byteLength, usage: TENSOR_USAGE });
      device.queue.writeBuffer(b, 0, data);
      return b;
    };
    this.penalties = buffer(penalties);
    this.bias = buffer(this.#base);
    this.#writeMasks();
  }

  /** Whether some slot is constrained (its bias changes every step: one step per readback). */
  get constrained(): boolean {
    return this.#constraints.some((c) => c !== undefined);
  }

  /**
   * Gives each constrained slot's constraint the tokens generated since the last call, and
   * writes the bias of the next step (slots in `finished` are left as they are).
   */
  update(tokens: readonly (readonly number[])[], finished: readonly boolean[]): void {
    this.#constraints.forEach((constraint, s) => {
      if (!constraint || finished[s]) return;
      for (const token of tokens[s].slice(this.#accepted[s])) constraint.accept(token);
      this.#accepted[s] = tokens[s].length;
    });
    this.#writeMasks(finished);
  }

  /** Frees the buffers. */
  destroy(): void {
    this.bias.destroy();
    this.penalties.destroy();
  }

  #writeMasks(finished: readonly boolean[] = []): void {
    const vocab = this.vocab;
    this.#constraints.forEach((constraint, s) => {
      if (!constraint || finished[s]) return;
      const allowed = constraint.allowed();
      const row = this.#base.slice(s * vocab, (s + 1) * vocab);
      for (let id = 0; id < vocab; id++) if (!hasToken(allowed, id)) row[id] = -Infinity;
      this.device.queue.writeBuffer(this.bias, s * vocab * 4, row);
    });
  }
}

/** A counts variable [slots, vocab] f32 for the penalties, zeroed by {@link clearCounts}. */
export function createCounts(device: GPUDevice, slots: number, vocab: number): Variable {
  const name = `logit_counts.${slots}x${vocab}`;
  const buffer = device.createBuffer({ label: name, size: slots * vocab * 4, usage: TENSOR_USAGE });
  return { name, shape: [slots, vocab], dtype: "f32", buffer };
}

/** Zeroes `counts` before a batch (ordered before later submits). */
export function clearCounts(device: GPUDevice, counts: Variable): void {
  const encoder = device.createCommandEncoder({ label: "clear logit counts" });
  encoder.clearBuffer(counts.buffer);
  device.queue.submit([encoder.finish()]);
}

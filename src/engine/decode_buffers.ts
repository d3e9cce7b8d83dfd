/**
 * The GPU buffers of one engine batch's decode blocks: the history of a block's steps (each
 * step's sampled tokens and log-probs, copied in after its graph ran) and the steps' own inputs
 * (positions and RNG states), one region per step, written before the block's single submit, so
 * no step of a recorded block takes host data. Read back once per block.
 */

import { TENSOR_USAGE } from "../gpu/buffer_pool.ts";
import { readBuffers } from "../gpu/readback.ts";
import type { BufferFeed, Executable } from "../graph/executable.ts";
import type { Tensor } from "../graph/tensor.ts";
import { RNG_WIDTH } from "./sampler.ts";

/** A step graph's outputs the history keeps. */
export interface SampledOutputs {
  exe: Executable;
  tokens: Tensor;
  logprobs: Tensor;
}

/** One step's inputs, as feeds of the decode graph. */
export interface StepFeeds {
  positions: BufferFeed;
  rng: BufferFeed;
  settings: GPUBuffer;
}

/** A block's sampled tokens and log-probs, [steps, slots]. */
export interface BlockHistory {
  tokens: Uint32Array;
  logprobs: Float32Array;
  steps: number;
}

/** The buffers of a batch of `slots` slots decoded `block` steps per readback. */
export class DecodeBuffers {
  readonly #history: { tokens: GPUBuffer; logprobs: GPUBuffer };
  readonly #positions: GPUBuffer;
  readonly #rng: GPUBuffer;
  readonly #settings: GPUBuffer;

  constructor(
    readonly device: GPUDevice,
    readonly slots: number,
    readonly block: number,
    settings: Float32Array<ArrayBuffer>,
  ) {
    const perStep = (bytesPerStep: number) =>
      device.createBuffer({ size: block * bytesPerStep, usage: TENSOR_USAGE });
    this.#history = { tokens: perStep(slots * 4), logprobs: perStep(slots * 4) };
    this.#positions = perStep(slots * 4);
    this.#rng = perStep(slots * RNG_WIDTH * 4);
    this.#settings = device.createBuffer({ size: settings.byteLength, usage: TENSOR_USAGE });
    device.queue.writeBuffer(this.#settings, 0, settings);
  }

  /** Writes step `inBlock`'s positions and RNG states into its regions; returns its feeds. */
  writeStep(
    inBlock: number,
    positions: Int32Array<ArrayBuffer>,
    rng: Uint32Array<ArrayBuffer>,
  ): StepFeeds {
    const [positionsAt, rngAt] = [inBlock * this.slots * 4, inBlock * this.slots * RNG_WIDTH * 4];
    this.device.queue.writeBuffer(this.#positions, positionsAt, positions);
    this.device.queue.writeBuffer(this.#rng, rngAt, rng);
    return {
      positions: { source: this.#positions, offset: positionsAt },
      rng: { source: this.#rng, offset: rngAt },
      settings: this.#settings,
    };
  }

  /** Commands copying `graph`'s tokens and log-probs into step `inBlock` of the history. */
  record(graph: SampledOutputs, inBlock: number): (encoder: GPUCommandEncoder) => void {
    const bytes = this.slots * 4;
    return (encoder) => {
      for (
        const [output, history] of [[graph.tokens, this.#history.tokens], [
          graph.logprobs,
          this.#history.logprobs,
        ]] as const
      ) {
        encoder.copyBufferToBuffer(graph.exe.buffer(output), 0, history, inBlock * bytes, bytes);
      }
    };
  }

  /** The first `steps` steps of the history, in one readback. */
  async readHistory(steps: number): Promise<BlockHistory> {
    const bytes = steps * this.slots * 4;
    const [tokens, logprobs] = await readBuffers(this.device, [
      { buffer: this.#history.tokens, bytes },
      { buffer: this.#history.logprobs, bytes },
    ]);
    return { tokens: new Uint32Array(tokens), logprobs: new Float32Array(logprobs), steps };
  }

  /** Frees the buffers. */
  destroy(): void {
    for (const b of [this.#history.tokens, this.#history.logprobs, this.#positions, this.#rng]) {
      b.destroy();
    }
    this.#settings.destroy();
  }
}

/**
 * A {@link RolloutModel} that passes every call on to another and measures the wall time during
 * which at least one call is in flight: how long the workflows of a step waited on generation,
 * as opposed to their own work (reward fns, building experiences). Overlapping calls of
 * concurrent runners count once. Changes no call or result.
 */

import type { ChatMessage } from "../src/model/chat_template.ts";
import type { Tokenizer } from "../src/model/tokenizer.ts";
import type { Rollout, RolloutModel, RolloutOptions } from "../src/workflow/rollout_model.ts";

/** Times the generation calls made through it (see the file comment). */
export class GenerationTimer implements RolloutModel {
  #inFlight = 0;
  #since = 0;
  #milliseconds = 0;

  /** `now` gives milliseconds (a test may pass a scripted clock). */
  constructor(
    readonly inner: RolloutModel,
    readonly now: () => number = () => performance.now(),
  ) {}

  get policyVersion(): number {
    return this.inner.policyVersion;
  }

  get tokenizer(): Tokenizer {
    return this.inner.tokenizer;
  }

  generate(prompt: string | readonly number[], options?: RolloutOptions): Promise<Rollout[]> {
    return this.#timed(() => this.inner.generate(prompt, options));
  }

  chat(messages: readonly ChatMessage[], options?: RolloutOptions): Promise<Rollout[]> {
    return this.#timed(() => this.inner.chat(messages, options));
  }

  /** Seconds with at least one call in flight since the last {@link takeSeconds}. */
  takeSeconds(): number {
    if (this.#inFlight > 0) {
      throw new Error(`Cannot take the generation time: ${this.#inFlight} calls are in flight`);
    }
    const seconds = this.#milliseconds / 1000;
    this.#milliseconds = 0;
    return seconds;
  }

  async #timed(call: () => Promise<Rollout[]>): Promise<Rollout[]> {
    if (this.#inFlight++ === 0) this.#since = this.now();
    try {
      return await call();
    } finally {
      if (--this.#inFlight === 0) this.#milliseconds += this.now() - this.#since;
    }
  }
}

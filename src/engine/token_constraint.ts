/**
 * What constrained decoding asks of the generation engine: a per-sample object that says which
 * tokens may come next and is told each token sampled. The engine masks every other token's
 * logit to -inf before sampling (so the reported log-prob is still the model's own). Grammars
 * live above the engine (`src/constrained/`); this file is only the contract.
 */

/** The tokens one sample may generate next, updated as it generates. */
export interface TokenConstraint {
  /**
   * The tokens allowed at the next step, as a bitset over the vocabulary (bit `id % 32` of word
   * `id >> 5`). Never empty: a constraint with no way forward allows its stop tokens.
   */
  allowed(): Uint32Array;
  /** Takes the token sampled at this step. */
  accept(token: number): void;
}

/** Whether bit `id` of `bits` is set. */
export function hasToken(bits: Uint32Array, id: number): boolean {
  return ((bits[id >>> 5] >>> (id & 31)) & 1) === 1;
}

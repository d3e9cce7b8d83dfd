/**
 * vLLM's `min_tokens` (Trinity's `model.min_response_tokens`) as a {@link TokenConstraint}: a
 * sample's stop tokens are not sampled before it holds `minTokens` tokens; any other constraint
 * of the request still applies.
 */

import type { TokenConstraint } from "./token_constraint.ts";

/**
 * A constraint factory that forbids `stop` for the first `minTokens` tokens of a sample, over a
 * vocabulary of `vocab` tokens, on top of the constraints `inner` makes (when given).
 */
export function minTokensConstraint(
  minTokens: number,
  stop: readonly number[],
  vocab: number,
  inner?: () => TokenConstraint,
): () => TokenConstraint {
  const words = Math.ceil(vocab / 32);
  return () => {
    const own = inner?.();
    let taken = 0;
    return {
      allowed(): Uint32Array {
        const base = own?.allowed();
        if (taken >= minTokens) return base ?? allTokens(words, vocab);
        const bits = base ? Uint32Array.from(base) : allTokens(words, vocab);
        for (const id of stop) bits[id >>> 5] &= ~(1 << (id & 31));
        // Only stop tokens left (the inner constraint is done): let it end.
        return bits.some((w) => w !== 0) ? bits : base ?? allTokens(words, vocab);
      },
      accept(token: number): void {
        taken++;
        own?.accept(token);
      },
    };
  };
}

/** A bitset with the first `vocab` bits set. */
function allTokens(words: number, vocab: number): Uint32Array {
  const bits = new Uint32Array(words).fill(0xffffffff);
  if (vocab % 32) bits[words - 1] = (1 << (vocab % 32)) - 1;
  return bits;
}

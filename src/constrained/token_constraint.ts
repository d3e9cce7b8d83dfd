/**
 * Constrained decoding over a tokenizer's vocabulary: which tokens keep a generated text inside
 * a byte {@link Grammar}. A {@link TokenGrammar} binds a grammar's automaton to a vocabulary and
 * the tokens that end a sample; the tokens allowed in each automaton state are found by walking
 * every token's bytes (in byte order, sharing the walk of common prefixes) and kept per state, so
 * a state seen again costs nothing. {@link TokenGrammar.constraint} gives the engine's
 * per-sample {@link TokenConstraint}.
 */

import type { TokenConstraint } from "../engine/token_constraint.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import { ByteAutomaton, DEAD, type StateId } from "./byte_automaton.ts";
import type { Grammar } from "./grammar.ts";

/** A vocabulary's token bytes, ordered for prefix-sharing walks. */
export class TokenVocabulary {
  static readonly #cache = new WeakMap<Tokenizer, TokenVocabulary>();
  /** Ids of the tokens that add bytes, sorted by their bytes. */
  readonly order: Int32Array;
  /** Per entry of {@link order}: bytes it shares with the entry before. */
  readonly sharedPrefix: Int32Array;

  /** `bytes[id]`: what token `id` adds to the text (null: a special token). */
  constructor(readonly bytes: readonly (Uint8Array | null)[]) {
    const ids = bytes.flatMap((b, id) => (b && b.length > 0 ? [id] : []));
    ids.sort((a, b) => compareBytes(bytes[a]!, bytes[b]!));
    this.order = Int32Array.from(ids);
    this.sharedPrefix = Int32Array.from(
      ids,
      (id, k) => k === 0 ? 0 : sharedLength(bytes[ids[k - 1]]!, bytes[id]!),
    );
  }

  /** The vocabulary of `tokenizer` (built once per tokenizer). */
  static of(tokenizer: Tokenizer): TokenVocabulary {
    let vocab = TokenVocabulary.#cache.get(tokenizer);
    if (!vocab) {
      vocab = new TokenVocabulary(tokenizer.tokenBytes());
      TokenVocabulary.#cache.set(tokenizer, vocab);
    }
    return vocab;
  }

  get size(): number {
    return this.bytes.length;
  }
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

function sharedLength(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** A grammar over a tokenizer's tokens. */
export class TokenGrammar {
  readonly automaton: ByteAutomaton;
  readonly #masks = new Map<StateId, Uint32Array>();
  readonly #words: number;

  /**
   * `endTokens`: the tokens that end a sample (EOS, stop tokens); allowed where the text is a
   * whole sentence of `grammar`, and, so that the engine can always sample, where no token fits.
   */
  constructor(
    grammar: Grammar,
    readonly vocabulary: TokenVocabulary,
    readonly endTokens: readonly number[],
  ) {
    this.automaton = new ByteAutomaton(grammar);
    this.#words = Math.ceil(vocabulary.size / 32);
  }

  /** The tokens allowed in `state` (a bitset; see {@link TokenConstraint.allowed}). */
  allowed(state: StateId): Uint32Array {
    let mask = this.#masks.get(state);
    if (!mask) {
      mask = this.#compute(state);
      this.#masks.set(state, mask);
    }
    return mask;
  }

  /** The state after token `id` from `state` (an end token or special token: {@link DEAD}). */
  step(state: StateId, id: number): StateId {
    const bytes = this.vocabulary.bytes[id];
    return bytes && bytes.length > 0 ? this.automaton.walk(state, bytes) : DEAD;
  }

  /** A fresh per-sample constraint starting at the grammar's start. */
  constraint(): TokenConstraint {
    let state = this.automaton.start;
    return {
      allowed: () => this.allowed(state),
      accept: (token) => {
        state = this.step(state, token);
      },
    };
  }

  #compute(state: StateId): Uint32Array {
    const mask = new Uint32Array(this.#words);
    const set = (id: number) => mask[id >>> 5] |= 1 << (id & 31);
    const { order, sharedPrefix, bytes } = this.vocabulary;
    const automaton = this.automaton;
    // states[i]: the state after the first i bytes of the current token.
    const states: StateId[] = [state];
    let any = false;
    for (let k = 0; k < order.length; k++) {
      const id = order[k];
      const token = bytes[id]!;
      let depth = Math.min(sharedPrefix[k], states.length - 1);
      let s = states[depth];
      while (s !== DEAD && depth < token.length) {
        s = automaton.step(s, token[depth++]);
        states[depth] = s;
      }
      states.length = depth + 1;
      if (s !== DEAD) {
        set(id);
        any = true;
      }
    }
    if (automaton.accepting(state) || !any) { for (const id of this.endTokens) set(id); }
    return mask;
  }
}

/**
 * Runs a {@link Grammar} over bytes as a lazily built deterministic automaton: a state is the set
 * of places the grammar may be at (each a byte-reading leaf with the stack of rules to resume
 * after it), interned by a canonical key, and its transition on each byte is computed on first
 * use and kept. Recursive grammars (any JSON value) have unboundedly many states, but only those
 * a text reaches are ever built. Knows no tokens (see `token_constraint.ts`).
 */

import type { Grammar } from "./grammar.ts";

/** Index of a state of a {@link ByteAutomaton}; {@link DEAD} when no text can continue. */
export type StateId = number;

/** The state of a prefix that no text of the grammar begins with. */
export const DEAD: StateId = -1;

/** A rule to resume once the current one is matched: a sequence's next item or a repeat's next count. */
interface Frame {
  readonly rule: Grammar & { kind: "seq" | "repeat" };
  readonly index: number;
  readonly parent: Frame | null;
  readonly key: string;
}

/** A byte-reading leaf of the grammar, where the text may be. */
interface Thread {
  readonly leaf: Grammar & { kind: "bytes" | "class" };
  /** Bytes of a literal already read. */
  readonly offset: number;
  readonly frame: Frame | null;
  readonly key: string;
}

interface State {
  readonly threads: readonly Thread[];
  /** The text so far is a whole sentence of the grammar. */
  readonly accepting: boolean;
  /** Next state by byte: -2 not computed yet. */
  readonly next: Int32Array;
}

const UNKNOWN = -2;

/** The leaves one expansion reaches, and the (rule, frame) pairs it has visited. */
interface Expansion {
  readonly threads: Map<string, Thread>;
  readonly seen: Set<string>;
}

const expansion = (threads: Map<string, Thread>): Expansion => ({ threads, seen: new Set() });

/** A grammar's lazily determinized automaton over bytes. */
export class ByteAutomaton {
  readonly #states: State[] = [];
  readonly #ids = new Map<string, StateId>();
  readonly #frames = new Map<string, Frame>();
  /** The state before any byte. */
  readonly start: StateId;

  constructor(readonly grammar: Grammar) {
    const threads = new Map<string, Thread>();
    const accepting = this.#expand(grammar, null, expansion(threads));
    this.start = this.#intern([...threads.values()], accepting);
  }

  /** States built so far. */
  get size(): number {
    return this.#states.length;
  }

  /** The state after `byte` from `state` ({@link DEAD} stays dead). */
  step(state: StateId, byte: number): StateId {
    if (state === DEAD) return DEAD;
    const s = this.#states[state];
    const known = s.next[byte];
    if (known !== UNKNOWN) return known;
    const threads = new Map<string, Thread>();
    let accepting = false;
    for (const t of s.threads) {
      if (t.leaf.kind === "class") {
        if (t.leaf.set[byte]) accepting = this.#resume(t.frame, expansion(threads)) || accepting;
      } else if (t.leaf.bytes[t.offset] === byte) {
        if (t.offset + 1 < t.leaf.bytes.length) {
          const key = `${t.leaf.id}@${t.offset + 1}/${t.frame?.key ?? ""}`;
          threads.set(key, { leaf: t.leaf, offset: t.offset + 1, frame: t.frame, key });
        } else accepting = this.#resume(t.frame, expansion(threads)) || accepting;
      }
    }
    const next = this.#intern([...threads.values()], accepting);
    s.next[byte] = next;
    return next;
  }

  /** The state after all of `bytes`. */
  walk(state: StateId, bytes: Uint8Array): StateId {
    for (let i = 0; i < bytes.length && state !== DEAD; i++) state = this.step(state, bytes[i]);
    return state;
  }

  /** Whether the text that led to `state` is a whole sentence of the grammar. */
  accepting(state: StateId): boolean {
    return state !== DEAD && this.#states[state].accepting;
  }

  /** Whether any byte may follow in `state` (false: the sentence is complete). */
  canContinue(state: StateId): boolean {
    return state !== DEAD && this.#states[state].threads.length > 0;
  }

  #intern(threads: Thread[], accepting: boolean): StateId {
    if (threads.length === 0 && !accepting) return DEAD;
    const key = threads.map((t) => t.key).sort().join("|") + (accepting ? "!" : "");
    let id = this.#ids.get(key);
    if (id === undefined) {
      id = this.#states.length;
      this.#states.push({ threads, accepting, next: new Int32Array(256).fill(UNKNOWN) });
      this.#ids.set(key, id);
    }
    return id;
  }

  #frame(rule: Frame["rule"], index: number, parent: Frame | null): Frame {
    const key = `${rule.id}.${index}:${parent?.key ?? ""}`;
    let frame = this.#frames.get(key);
    if (!frame) {
      frame = { rule, index, parent, key };
      this.#frames.set(key, frame);
    }
    return frame;
  }

  /**
   * Adds to `x` the leaves where `rule` may start, `frame` resumed after it; returns whether it
   * may match nothing with nothing left to resume (the sentence may end here). `x.seen` cuts
   * cycles through rules that match the empty string.
   */
  #expand(rule: Grammar, frame: Frame | null, x: Expansion): boolean {
    const visit = `${rule.id}/${frame?.key ?? ""}`;
    if (x.seen.has(visit)) return false;
    x.seen.add(visit);
    switch (rule.kind) {
      case "bytes":
        if (rule.bytes.length === 0) return this.#resume(frame, x);
        return addLeaf(rule, frame, x);
      case "class":
        return addLeaf(rule, frame, x);
      case "seq":
        return this.#continueSeq(rule, 0, frame, x);
      case "alt":
        return rule.options.reduce((acc, option) => this.#expand(option, frame, x) || acc, false);
      case "repeat":
        return this.#continueRepeat(rule, 0, frame, x);
      case "lazy":
        return this.#expand(rule.resolve(), frame, x);
    }
  }

  /** Continues after the rule `frame` waits on has matched. */
  #resume(frame: Frame | null, x: Expansion): boolean {
    if (frame === null) return true;
    return frame.rule.kind === "seq"
      ? this.#continueSeq(frame.rule, frame.index, frame.parent, x)
      : this.#continueRepeat(frame.rule, frame.index, frame.parent, x);
  }

  /** Continues a sequence at item `index`. */
  #continueSeq(rule: SeqRule, index: number, parent: Frame | null, x: Expansion): boolean {
    if (index === rule.items.length) return this.#resume(parent, x);
    return this.#expand(rule.items[index], this.#frame(rule, index + 1, parent), x);
  }

  /** Continues a repeat that has matched `count` items. */
  #continueRepeat(rule: RepeatRule, count: number, parent: Frame | null, x: Expansion): boolean {
    let accepting = count >= rule.min ? this.#resume(parent, x) : false;
    if (count < rule.max) {
      // Past `min`, an unbounded repeat behaves the same at every count: one frame serves all.
      const nextCount = rule.max === Infinity ? Math.min(count + 1, rule.min) : count + 1;
      accepting = this.#expand(rule.item, this.#frame(rule, nextCount, parent), x) || accepting;
    }
    return accepting;
  }
}

type SeqRule = Grammar & { kind: "seq" };
type RepeatRule = Grammar & { kind: "repeat" };

function addLeaf(leaf: Thread["leaf"], frame: Frame | null, x: Expansion): false {
  const key = `${leaf.id}@0/${frame?.key ?? ""}`;
  x.threads.set(key, { leaf, offset: 0, frame, key });
  return false;
}

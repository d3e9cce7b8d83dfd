/**
 * Named registries of components (advantage fns, policy losses, KL fns, entropy losses, algorithm
 * types, sample strategies, operators, workflows, reward fns) and the resolution of a component's `*_args` over its defaults. Registration
 * is explicit: nothing registers itself on import, and an unknown name is an error that lists the
 * known names (with a did-you-mean for a near miss). Loading plugins is not done here.
 */

/** A scalar value of a component argument. */
export type ScalarArg = number | string | boolean | null;

/**
 * A value of a component argument (what a YAML `*_args` mapping may hold): a scalar, a list, or
 * a mapping of further values (e.g. a reward fn's `weights: {format: 0.5, accuracy: 0.5}`).
 */
export type ArgValue = ScalarArg | readonly ArgValue[] | { readonly [key: string]: ArgValue };

/** A component's arguments, keyed as in YAML (`clip_range_low`, `std_threshold`, ...). */
export type Args = Readonly<Record<string, ArgValue>>;

/** A registry entry that has default arguments. */
export interface Configurable {
  /**
   * Every argument the entry takes with its default. A key whose default is `null` takes a
   * number or `null` (an optional number); a mapping default takes a mapping whose keys are
   * checked against it the same way; a list default takes a list (of its first item's type,
   * when it has one); any other key takes values of its default's type, or `null` for the
   * default.
   */
  readonly defaultArgs: Args;
}

/** Components of one kind (e.g. "advantage fn"), by name. */
export class Registry<T> {
  readonly #entries = new Map<string, T>();

  /** `kind` names the components in messages; `entries` are registered in order. */
  constructor(readonly kind: string, entries: readonly (readonly [string, T])[] = []) {
    for (const [name, entry] of entries) this.register(name, entry);
  }

  /** Adds `entry` under `name`; throws when the name is taken. */
  register(name: string, entry: T): void {
    if (!name) throw new Error(`Cannot register ${this.kind}: the name is empty`);
    if (this.#entries.has(name)) {
      throw new Error(`Cannot register ${this.kind} "${name}": the name is taken`);
    }
    this.#entries.set(name, entry);
  }

  /** Whether `name` is registered. */
  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** The entry `name`; throws listing the known names when there is none. */
  get(name: string): T {
    const entry = this.#entries.get(name);
    if (entry === undefined) {
      throw new Error(`Unknown ${this.kind} "${name}"; ${knownNames(name, this.names())}`);
    }
    return entry;
  }

  /** The registered names, sorted. */
  names(): string[] {
    return [...this.#entries.keys()].sort();
  }
}

/** An entry of a registry with its arguments resolved. */
export interface Configured<T extends Configurable> {
  name: string;
  entry: T;
  args: T["defaultArgs"];
}

/**
 * Looks up `name` in `registry` and resolves `given` (a YAML `*_args` mapping) over the entry's
 * default arguments. Throws on an unknown name, an unknown key or a value of the wrong type.
 *
 * @example
 * ```ts
 * import { POLICY_LOSS_FN } from "../algorithm/policy_loss/mod.ts";
 * const { entry, args } = configure(POLICY_LOSS_FN, "ppo", { clip_range_high: 0.28 });
 * ```
 */
export function configure<T extends Configurable>(
  registry: Registry<T>,
  name: string,
  given: Readonly<Record<string, unknown>> = {},
): Configured<T> {
  const entry = registry.get(name);
  const args = resolveArgs(`${registry.kind} "${name}"`, entry.defaultArgs, given);
  return { name, entry, args };
}

/**
 * `given` resolved over `defaults` (see {@link Configurable.defaultArgs}); `component` names the
 * component in errors (`Cannot configure <component>: ...`), nested keys by their dotted path.
 */
export function resolveArgs(
  component: string,
  defaults: Args,
  given: Readonly<Record<string, unknown>>,
  prefix = "",
): Record<string, ArgValue> {
  const args: Record<string, ArgValue> = { ...defaults };
  for (const [key, value] of Object.entries(given)) {
    const path = `${prefix}${key}`;
    if (!Object.hasOwn(defaults, key)) {
      throw new Error(
        `Cannot configure ${component}: unknown key "${path}"; ${
          knownNames(key, Object.keys(defaults).sort())
        }`,
      );
    }
    args[key] = resolveArg(component, path, defaults[key], value);
  }
  return args;
}

/** One argument `value` at `path` checked against its `fallback` (the default). */
function resolveArg(component: string, path: string, fallback: ArgValue, value: unknown): ArgValue {
  if (value === null || value === undefined) return fallback;
  const bad = (expected: string): never => {
    throw new Error(
      `Cannot configure ${component}: key "${path}" expected ${expected}, received ${
        JSON.stringify(value)
      }`,
    );
  };
  if (fallback === null) return typeof value === "number" ? value : bad("a number or null");
  if (Array.isArray(fallback)) {
    if (!Array.isArray(value)) return bad("a list");
    if (fallback.length === 0) return value as ArgValue[];
    return value.map((item, i) => resolveArg(component, `${path}[${i}]`, fallback[0], item));
  }
  if (typeof fallback === "object") {
    const isMapping = typeof value === "object" && !Array.isArray(value);
    if (!isMapping) return bad("a mapping");
    return resolveArgs(component, fallback as Args, value as Record<string, unknown>, `${path}.`);
  }
  return typeof value === typeof fallback ? value as ArgValue : bad(`a ${typeof fallback}`);
}

/**
 * Throws unless `value` is one of `choices`; `component` and `key` name it in the message
 * (e.g. `advantage fn "grpo"`, `std_norm`).
 */
export function checkChoice<C extends string>(
  component: string,
  key: string,
  value: ArgValue,
  choices: readonly C[],
): C {
  if (!choices.includes(value as C)) {
    throw new Error(
      `Cannot configure ${component}: key "${key}" expected one of ${
        choices.join(", ")
      }, received ${JSON.stringify(value)}`,
    );
  }
  return value as C;
}

/**
 * `known: a, b, c`, with `. Did you mean "b"?` when exactly one of `names` is closest to `name`
 * and within one edit per three characters (at least one), or else when `name` (4 characters or
 * more) begins exactly one of them (`math_dapo` for `math_dapo_reward`); a tie between two near
 * names (`xapo` for `sapo` and `dapo`) suggests neither.
 */
export function knownNames(name: string, names: readonly string[]): string {
  const list = `known: ${names.length ? names.join(", ") : "(none)"}`;
  let best: string | undefined;
  let tied = false;
  let bestDistance = Math.max(1, Math.floor(name.length / 3)) + 1;
  for (const candidate of names) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance, tied] = [candidate, d, false];
    else if (d === bestDistance && best !== undefined) tied = true;
  }
  if (best === undefined && name.length >= 4) {
    const extending = names.filter((n) => n.toLowerCase().startsWith(name.toLowerCase()));
    if (extending.length === 1) [best, tied] = [extending[0], false];
  }
  return best === undefined || tied ? list : `${list}. Did you mean "${best}"?`;
}

/** Edit distance between `a` and `b`, counting an adjacent swap as one edit (Damerau, OSA). */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = Number(a[i - 1] !== b[j - 1]);
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

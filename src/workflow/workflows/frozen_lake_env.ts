/**
 * The FrozenLake grid game (Gymnasium's `FrozenLakeEnv`, as Trinity's frozen_lake workflow
 * drives it): a square map of `S` (start), `F` (frozen), `H` (hole) and `G` (goal); actions
 * Left, Down, Right, Up move one cell (kept on the map); on a slippery lake the move goes in the
 * intended direction or either perpendicular one with probability 1/3 each. Reaching `G` gives
 * reward 1 and ends the game, falling into `H` ends it with 0. Also Trinity's random valid maps
 * (holes with probability 1 - p, a start and a goal reachable within `maxSteps`) and its text
 * rendering. Maps and slips come from rft's seeded generator: the same seed gives the same game
 * here, not Gymnasium's (numpy's) map.
 */

import { mulberry32 } from "../../util/random.ts";

/** The moves, in Gymnasium's numbering. */
export const MOVES = ["Left", "Down", "Right", "Up"] as const;
export type Move = typeof MOVES[number];

/** [row, col] offsets of each move. */
const DELTAS: Record<Move, [number, number]> = {
  Left: [0, -1],
  Down: [1, 0],
  Right: [0, 1],
  Up: [-1, 0],
};

/** A FrozenLake game. */
export class FrozenLake {
  readonly #map: readonly string[];
  readonly #random: () => number;
  #row: number;
  #col: number;

  /** A game on `map` (rows of S/F/H/G), slipping with `slippery`, seeded by `seed`. */
  constructor(map: readonly string[], readonly slippery: boolean, seed: number) {
    const size = map.length;
    if (size === 0 || !map.every((r) => r.length === size && /^[SFHG]+$/.test(r))) {
      throw new Error(`expected a square map of S, F, H, G rows, received ${JSON.stringify(map)}`);
    }
    const start = map.join("").indexOf("S");
    if (start < 0 || !map.join("").includes("G")) {
      throw new Error(
        `expected a map with a start S and a goal G, received ${JSON.stringify(map)}`,
      );
    }
    this.#map = map;
    this.#random = mulberry32(seed);
    [this.#row, this.#col] = [Math.floor(start / size), start % size];
  }

  /** The cell the player is on. */
  get cell(): string {
    return this.#map[this.#row][this.#col];
  }

  /** Whether the game is over (the player is in a hole or on the goal). */
  get done(): boolean {
    return this.cell === "H" || this.cell === "G";
  }

  /** The player's [row, col]. */
  get position(): [number, number] {
    return [this.#row, this.#col];
  }

  /** Takes `move`; returns the reward (1 on reaching the goal). A finished game stays put. */
  step(move: Move): number {
    if (this.done) return 0;
    let actual = MOVES.indexOf(move);
    if (this.slippery) actual = (actual + 3 + Math.floor(this.#random() * 3)) % 4;
    const [dr, dc] = DELTAS[MOVES[actual]];
    const last = this.#map.length - 1;
    this.#row = Math.min(last, Math.max(0, this.#row + dr));
    this.#col = Math.min(last, Math.max(0, this.#col + dc));
    return this.cell === "G" ? 1 : 0;
  }

  /**
   * The board as Trinity renders it: one line per row, each cell ` P \t` (player), ` _ \t`
   * (frozen, the start included), ` O \t` (hole), ` G \t` (goal), ` X \t` (player in a hole),
   * ` √ \t` (player on the goal).
   */
  render(): string {
    return this.#map.map((row, r) =>
      [...row].map((cell, c) => {
        const here = r === this.#row && c === this.#col;
        if (here) return cell === "H" ? " X \t" : cell === "G" ? " √ \t" : " P \t";
        return cell === "H" ? " O \t" : cell === "G" ? " G \t" : " _ \t";
      }).join("")
    ).join("\n");
  }
}

/** Whether a cell `G` can be reached from `S` on `map` within `maxSteps` (Trinity's DFS). */
function reachable(map: readonly string[][], maxSteps: number): boolean {
  const size = map.length;
  const flat = map.flat();
  const start = flat.indexOf("S");
  const frontier: [number, number, number][] = [[Math.floor(start / size), start % size, 0]];
  const seen = new Set<number>();
  while (frontier.length) {
    const [r, c, steps] = frontier.pop()!;
    if (steps > maxSteps || seen.has(r * size + c)) continue;
    seen.add(r * size + c);
    for (const [dr, dc] of Object.values(DELTAS)) {
      const [nr, nc] = [r + dr, c + dc];
      if (nr < 0 || nr >= size || nc < 0 || nc >= size) continue;
      if (map[nr][nc] === "G") return true;
      if (map[nr][nc] !== "H") frontier.push([nr, nc, steps + 1]);
    }
  }
  return false;
}

/**
 * A random `size` x `size` map with frozen cells of probability `p`, distinct start and goal,
 * the goal reachable within `maxSteps` (Trinity's `generate_random_map`), drawn from `seed`.
 */
export function randomMap(size: number, p: number, seed: number, maxSteps: number): string[] {
  if (!Number.isInteger(size) || size < 2) {
    throw new Error(`expected a map size >= 2, received ${size}`);
  }
  const random = mulberry32(seed);
  const cell = () => Math.floor(random() * size);
  for (;;) {
    const map = Array.from(
      { length: size },
      () => Array.from({ length: size }, () => (random() < Math.min(1, p) ? "F" : "H") as string),
    );
    let [sr, sc, gr, gc] = [cell(), cell(), cell(), cell()];
    while (sr === gr && sc === gc) [sr, sc, gr, gc] = [cell(), cell(), cell(), cell()];
    map[sr][sc] = "S";
    map[gr][gc] = "G";
    if (reachable(map, maxSteps)) return map.map((row) => row.join(""));
  }
}

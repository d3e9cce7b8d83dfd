/**
 * Sudoku boards for `sudoku_workflow` (Trinity's `SudokuGenerator` and `SudokuJudge`): a
 * solved board filled by randomized backtracking (seeded), a puzzle made by clearing cells
 * (half of them at `medium`), and the checks (no repeat in a row, column or block; 0 is empty).
 * Any square size whose root is whole (4, 9).
 */

import { mulberry32 } from "../../util/random.ts";

/** A board: rows of digits, 0 = empty. */
export type Board = number[][];

/** Whether no row, column or block of `board` repeats a digit (0s are empty). */
export function validBoard(board: Board): boolean {
  const size = board.length;
  const block = Math.round(Math.sqrt(size));
  const distinct = (cells: number[]) => {
    const filled = cells.filter((v) => v !== 0);
    return new Set(filled).size === filled.length;
  };
  for (let i = 0; i < size; i++) {
    const blockRow = Math.floor(i / block) * block;
    const blockCol = (i % block) * block;
    const blockCells = board.slice(blockRow, blockRow + block)
      .flatMap((row) => row.slice(blockCol, blockCol + block));
    if (!distinct(board[i]) || !distinct(board.map((row) => row[i])) || !distinct(blockCells)) {
      return false;
    }
  }
  return true;
}

/** A puzzle and its solution of `size` (a square), `holes` cells cleared, from `seed`. */
export function generateSudoku(
  seed: number,
  size = 9,
  holes = Math.floor((size * size) / 2),
): { puzzle: Board; solution: Board } {
  const block = Math.round(Math.sqrt(size));
  if (block * block !== size) throw new Error(`expected a square board size, received ${size}`);
  const random = mulberry32(seed);
  const shuffled = <T>(xs: T[]) => {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [xs[i], xs[j]] = [xs[j], xs[i]];
    }
    return xs;
  };
  const board: Board = Array.from({ length: size }, () => new Array<number>(size).fill(0));
  const fill = (cell: number): boolean => {
    if (cell === size * size) return true;
    const [r, c] = [Math.floor(cell / size), cell % size];
    for (const v of shuffled(Array.from({ length: size }, (_, i) => i + 1))) {
      board[r][c] = v;
      if (validBoard(board) && fill(cell + 1)) return true;
    }
    board[r][c] = 0;
    return false;
  };
  fill(0);
  const solution = board.map((row) => [...row]);
  const cells = shuffled(Array.from({ length: size * size }, (_, i) => i));
  for (const cell of cells.slice(0, holes)) board[Math.floor(cell / size)][cell % size] = 0;
  return { puzzle: board, solution };
}

/**
 * `sudoku_workflow` (Trinity's `SudokuWorkflow`): a multi-step Sudoku game. Each step the
 * model sees the rules, the step count and the board (a fresh single-turn prompt) and answers
 * with up to 5 moves, one `row col value` per line (0-based row and column). A step ends the
 * game with reward -1 when its answer does not parse, fills a filled cell, changes nothing or
 * breaks a rule; with 1 when the board equals the solution; otherwise it scores 0 and the game
 * goes on, for at most 20 steps. Every step is one experience (the run's id marks the game).
 * The row gives `puzzle` and `solution` (9 x 9 lists), or a board is drawn from the row's
 * `seed` (rft's generator, not Python's). Each of the `n` rollouts plays its own game.
 */

import type { Experience } from "../../buffer/experience.ts";
import type { Task } from "../../buffer/task.ts";
import { experienceFromRollout } from "../experience_from_rollout.ts";
import { workflowArgs, type WorkflowFactory } from "../workflow.ts";
import { type Board, generateSudoku, validBoard } from "./sudoku_board.ts";

const MAX_STEPS = 20;
const MAX_MOVES = 5;

/**
 * The prompt of step `step` (Trinity's wording; a step without effect ends the game, so its
 * notice of one is never shown).
 */
function prompt(board: Board, step: number): string {
  return "You are playing a Sudoku game.\n\nRules:\n- The board is 9x9.\n- 0 means empty.\n" +
    "- Numbers 1–9 must appear exactly once in every row, column, and 3x3 block.\n" +
    "- You may only fill empty cells.\n\nTask:\n- In each step, output ONE OR MORE valid moves.\n" +
    `- You may output up to ${MAX_MOVES} moves per step.\n\nOutput format (STRICT):\n` +
    "row col value\nrow col value\n\nExample:\n0 2 4\n1 3 5\n\n" +
    `Current step: ${step}\nRemaining steps: ${MAX_STEPS - step}\n\n` +
    `Current board:\n${board.map((row) => row.join(" ")).join("\n")}\n`;
}

/** The moves of `reply` (`row col value` lines), or undefined when it breaks the format. */
export function parseMoves(reply: string): [number, number, number][] | undefined {
  const lines = reply.trim().split("\n").map((l) => l.trim()).filter((l) => l !== "");
  const moves = lines.map((line) => {
    const parts = line.split(/\s+/);
    const [r, c, v] = parts.map(Number);
    const ok = parts.length === 3 && parts.every((p) => /^[+-]?\d+$/.test(p)) &&
      r >= 0 && r <= 8 && c >= 0 && c <= 8 && v >= 1 && v <= 9;
    return ok ? [r, c, v] as [number, number, number] : undefined;
  });
  if (moves.length === 0 || moves.length > MAX_MOVES || moves.includes(undefined)) return;
  return moves as [number, number, number][];
}

/** The puzzle and solution of `task`'s row. */
function boardsOf(task: Task): { puzzle: Board; solution: Board } {
  const { puzzle, solution, seed } = task.rawTask as Record<string, unknown>;
  if (Array.isArray(puzzle) && Array.isArray(solution)) {
    return { puzzle: puzzle as Board, solution: solution as Board };
  }
  return generateSudoku(Number(seed ?? task.index));
}

/** Args: none. */
export const sudokuWorkflow: WorkflowFactory = {
  description: "multi-step Sudoku: fill cells step by step; -1 on a bad step, 1 when solved",
  defaultArgs: {},
  usesRewardFn: false,
  rowProblem: (row) =>
    Array.isArray(row.puzzle) === Array.isArray(row.solution)
      ? undefined
      : `expected both a puzzle and a solution (9 x 9 lists), or neither, found ${
        Object.keys(row).join(", ")
      }`,
  create(task, { model }) {
    workflowArgs(sudokuWorkflow, task);
    const play = async (runId: number): Promise<Experience[]> => {
      const { puzzle, solution } = boardsOf(task);
      const board = puzzle.map((row) => [...row]);
      const experiences: Experience[] = [];
      for (let step = 0; step < MAX_STEPS; step++) {
        const chat = [{ role: "user", content: prompt(board, step) }];
        const [rollout] = await model.chat(chat, { ...task.rolloutArgs, n: 1 });
        const before = JSON.stringify(board);
        const moves = parseMoves(rollout.text);
        let invalid = moves === undefined;
        for (const [r, c, v] of moves ?? []) {
          if (board[r][c] !== 0) {
            invalid = true;
            break;
          }
          board[r][c] = v;
        }
        const changed = JSON.stringify(board) !== before;
        const reward = invalid || !changed || !validBoard(board)
          ? -1
          : JSON.stringify(board) === JSON.stringify(solution)
          ? 1
          : 0;
        experiences.push(experienceFromRollout(task, runId, rollout, reward));
        if (reward !== 0) break;
      }
      return experiences;
    };
    return {
      run: async () =>
        (await Promise.all(Array.from({ length: task.rolloutArgs.n }, (_, i) => play(i)))).flat(),
    };
  },
};

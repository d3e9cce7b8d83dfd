/**
 * `sudoku_workflow`: generated boards are valid puzzles of their solutions; a game against a
 * scripted model ends on a bad step (-1) or a solved board (1), one experience per step.
 */

import { createWorkflow } from "../../src/workflow/mod.ts";
import { parseMoves } from "../../src/workflow/workflows/sudoku.ts";
import { generateSudoku, validBoard } from "../../src/workflow/workflows/sudoku_board.ts";
import { assertEquals } from "../_asserts.ts";
import { makeTask, ScriptedModel, TOKENIZER } from "./_scripted_model.ts";

Deno.test("generateSudoku: a full valid solution and a puzzle that is part of it", () => {
  const { puzzle, solution } = generateSudoku(4);
  assertEquals(validBoard(solution), true);
  assertEquals(solution.flat().every((v) => v >= 1 && v <= 9), true);
  assertEquals(puzzle.flat().filter((v) => v === 0).length, 40);
  assertEquals(puzzle.flat().every((v, i) => v === 0 || v === solution.flat()[i]), true);
  assertEquals(generateSudoku(4), { puzzle, solution }, "seeded");
  assertEquals(validBoard([[1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]), false);
});

Deno.test("parseMoves: up to five `row col value` lines, in range", () => {
  assertEquals(parseMoves("0 2 4\n 1 3 5 \n"), [[0, 2, 4], [1, 3, 5]]);
  assertEquals([parseMoves("0 2"), parseMoves("9 0 1"), parseMoves("0 0 0"), parseMoves("")], [
    undefined,
    undefined,
    undefined,
    undefined,
  ]);
});

Deno.test("sudoku_workflow: right moves score 0 then 1; a bad step ends with -1", async () => {
  const { puzzle, solution } = generateSudoku(7);
  const holes: [number, number][] = [];
  puzzle.forEach((row, r) => row.forEach((v, c) => v === 0 && holes.push([r, c])));
  // Solve all but two cells in the puzzle given; then the last two in one step.
  const almost = solution.map((row) => [...row]);
  const [a, b] = holes.slice(0, 2);
  almost[a[0]][a[1]] = 0;
  almost[b[0]][b[1]] = 0;
  const row = { puzzle: almost, solution };
  const move = ([r, c]: [number, number]) => `${r} ${c} ${solution[r][c]}`;
  const model = new ScriptedModel([move(a), move(b)]);
  const task = makeTask(row, { workflow: "sudoku_workflow" });
  const exps = await createWorkflow(task, { model }).run();
  assertEquals(exps.map((e) => e.reward), [0, 1]);
  assertEquals(TOKENIZER.decode(model.calls[1].promptTokens).includes("Current step: 1"), true);
  const wrong = new ScriptedModel([`${a[0]} ${a[1]} ${(solution[a[0]][a[1]] % 9) + 1}\n`, "x"]);
  const lost = await createWorkflow(task, { model: wrong }).run();
  // A wrong digit may still be valid for now (0) or break a rule at once (-1).
  assertEquals(lost.at(-1)!.reward, -1);
});

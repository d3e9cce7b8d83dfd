/**
 * `frozen_lake_workflow`: the game (moves kept on the board, holes and the goal end it, slips
 * seeded), Trinity's board rendering and move parsing, random maps that are solvable, and a
 * whole game played move by move against a scripted model: every observation the model is
 * shown, the stuck notice after an invalid answer, the reward and the action mask.
 */

import { createWorkflow } from "../../src/workflow/mod.ts";
import { FROZEN_LAKE_SYSTEM_PROMPT, parseMove } from "../../src/workflow/workflows/frozen_lake.ts";
import { FrozenLake, randomMap } from "../../src/workflow/workflows/frozen_lake_env.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { makeTask, ScriptedModel, TOKENIZER } from "./_scripted_model.ts";

const MAP = ["SFF", "FHF", "FFG"];

Deno.test("FrozenLake: moves stay on the board; a hole or the goal ends the game", () => {
  const lake = new FrozenLake(MAP, false, 1);
  assertEquals(lake.render(), " P \t _ \t _ \t\n _ \t O \t _ \t\n _ \t _ \t G \t");
  assertEquals([lake.step("Up"), lake.position], [0, [0, 0]], "off the board: stays");
  assertEquals([lake.step("Right"), lake.step("Down"), lake.position], [0, 0, [1, 1]]);
  assertEquals([lake.done, lake.cell], [true, "H"]);
  assertEquals(lake.render(), " _ \t _ \t _ \t\n _ \t X \t _ \t\n _ \t _ \t G \t");
  assertEquals([lake.step("Right"), lake.position], [0, [1, 1]], "a finished game stays put");
  const goal = new FrozenLake(MAP, false, 1);
  assertEquals(["Down", "Down", "Right", "Right"].map((m) => goal.step(m as "Down")), [0, 0, 0, 1]);
  assertEquals(goal.render().split("\n")[2], " _ \t _ \t √ \t");
  assertThrows(() => new FrozenLake(["SF", "F"], false, 1), Error, "square map");
  assertThrows(() => new FrozenLake(["SF", "FF"], false, 1), Error, "a goal G");
});

Deno.test("FrozenLake: a slippery lake slips the same way for the same seed", () => {
  const walk = (seed: number) => {
    const lake = new FrozenLake(["SFFF", "FFFF", "FFFF", "FFFG"], true, seed);
    return Array.from({ length: 6 }, () => (lake.step("Right"), lake.position.join(",")));
  };
  assertEquals(walk(5), walk(5));
  // Intended Right, or Up / Down: never Left, so the column never decreases.
  const cols = walk(5).map((p) => Number(p.split(",")[1]));
  assertEquals(cols.every((c, i) => i === 0 || c >= cols[i - 1]), true);
});

Deno.test("randomMap: square, one start and goal, solvable within max_steps, seeded", () => {
  for (const seed of [0, 1, 2, 3]) {
    const map = randomMap(4, 0.7, seed, 8);
    assertEquals(map.length, 4);
    assertEquals(map.join("").split("S").length - 1, 1);
    assertEquals(map.join("").split("G").length - 1, 1);
    assertEquals(randomMap(4, 0.7, seed, 8), map);
  }
  assertThrows(() => randomMap(1, 0.8, 0, 8), Error, "size >= 2");
});

Deno.test("parseMove: the last ``` block, a move name or 1-4", () => {
  assertEquals(parseMove("think... ```Up```"), "Up");
  assertEquals(parseMove("```left``` no, ```Down```"), "Down");
  assertEquals(parseMove("``` 3 ```"), "Right");
  assertEquals([parseMove("Up"), parseMove("```jump```"), parseMove("```5```")], [
    undefined,
    undefined,
    undefined,
  ]);
});

Deno.test("frozen_lake_workflow: a game move by move, as the model sees it", async () => {
  const replies = ["I go ```Right```", "```Right```", "hmm", "```Down```", "```down```"];
  const model = new ScriptedModel(replies);
  const task = makeTask({ seed: 3 }, {
    workflow: "frozen_lake_workflow",
    workflowArgs: { desc: MAP, agent_max_steps: 10 },
  });
  const [exp] = await createWorkflow(task, { model }).run();
  const shown = model.calls.map((c) => TOKENIZER.decode(c.promptTokens));
  const boards = [
    " P \t _ \t _ \t\n _ \t O \t _ \t\n _ \t _ \t G \t",
    " _ \t P \t _ \t\n _ \t O \t _ \t\n _ \t _ \t G \t",
    " _ \t _ \t P \t\n _ \t O \t _ \t\n _ \t _ \t G \t",
    " _ \t _ \t P \t\n _ \t O \t _ \t\n _ \t _ \t G \t",
    " _ \t _ \t _ \t\n _ \t O \t P \t\n _ \t _ \t G \t",
  ];
  const notice =
    "You have not achieved the goal, P has not reached G yet. Please give the next action.";
  boards.forEach((board, step) => {
    const last = shown[step].split(`Current Observation (${step}): \n`).at(-1)!;
    assertEquals(last.startsWith(`${board}\n${notice}`), true, `observation ${step}: ${last}`);
    assertEquals(last.includes("Your last response is invalid"), step === 3, `stuck at ${step}`);
    assertEquals(last.includes(`steps remaining is ${10 - step}.`), true);
  });
  assertEquals(shown[0].includes(FROZEN_LAKE_SYSTEM_PROMPT.slice(0, 60)), true);
  assertEquals(model.calls.map((c) => c.kind), [
    "chat",
    "generate",
    "generate",
    "generate",
    "generate",
  ]);
  assertEquals([exp.reward, exp.metrics], [1, { env_steps: 5, env_done: 1, test_score: 1 }]);
  // The mask is 1 on the five replies (and their eos) only.
  const masked = exp.tokens.filter((_, t) => exp.actionMask[t]);
  assertEquals(TOKENIZER.decode(masked), replies.join("<eos>") + "<eos>");
});

Deno.test("frozen_lake_workflow: a hole ends the game with reward 0; turns are capped", async () => {
  const task = (moves: string[], max: number) => ({
    model: new ScriptedModel(moves),
    task: makeTask({ seed: 3 }, {
      workflow: "frozen_lake_workflow",
      workflowArgs: { desc: MAP, agent_max_steps: max },
    }),
  });
  const hole = task(["```Right```", "```Down```", "```Down```"], 10);
  const [lost] = await createWorkflow(hole.task, { model: hole.model }).run();
  assertEquals([lost.reward, lost.metrics?.env_steps, lost.metrics?.env_done], [0, 2, 1]);
  const capped = task(["```Up```", "```Up```"], 2);
  const [timeout] = await createWorkflow(capped.task, { model: capped.model }).run();
  assertEquals([timeout.reward, timeout.metrics?.env_steps, timeout.metrics?.env_done], [0, 2, 0]);
});

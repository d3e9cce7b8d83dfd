/**
 * `frozen_lake_workflow` (Trinity's `FrozenLakeWorkflow`, after rLLM and RAGEN): a multi-turn
 * text game. The row gives a map (`size`, frozen probability `p`, `seed`; or
 * `workflow_args.desc`, its rows); each turn the model sees the board (`frozen_lake_env.ts`'s
 * rendering) and answers with its move in ``` ``` (Up, Down, Left, Right, or 1 to 4); an answer
 * without a valid move leaves the player in place, and the next observation says so. The game
 * ends when the player reaches the goal or a hole, or after `agent_max_steps` turns. Reward:
 * 1 for reaching the goal, else 0. Each of the `n` rollouts plays its own game; the transcript
 * is one experience whose action mask covers the model's tokens. Metrics `env_steps`,
 * `env_done`, `test_score`. Differs from Trinity: maps are drawn by rft's seeded generator,
 * so a seed gives another map than Gymnasium's.
 */

import type { Task } from "../../buffer/task.ts";
import { Episode } from "../episode.ts";
import { workflowArgs, type WorkflowFactory } from "../workflow.ts";
import { FrozenLake, type Move, MOVES, randomMap } from "./frozen_lake_env.ts";

/** Trinity's system prompt of the game (RAGEN's). */
export const FROZEN_LAKE_SYSTEM_PROMPT =
  `You are Qwen, created by Alibaba Cloud. You are a helpful assistant. You are walking on a frozen lake.

FrozenLake Quick Guide
Goal: Reach the goal (G). Player (P) and Goal (G) must overlap.

Symbols:
_ Frozen | O Hole | G Goal | P Player

Rules:
1. Avoid falling into holes (O).
2. Frozen tiles are slippery, you may move perpendicular to your intended direction.

Valid Action (separated by | ):
Up | Down | Left | Right

Rewards:
Fall into hole: 0
Reach goal: +1.0

You will be provided the current observation, please decide on the next Action.
You should show your thought process and then input the final action in \`\`\` \`\`\`.
You should only output the NEXT ACTION at each interation in the \`\`\` \`\`\`. For example, if you want to move up, you should output \`\`\`Up\`\`\`.
You should plan ahead and need to achieve it in minimum number of steps.
You should be aware that frozen tiles can be slippery, but the chance is small and you should not overthink it.

Please show your thinking process and put the final action in \`\`\` \`\`\`. In every turn, the final action MUST be one of Up, Down, Left, Right.
`;

/** The move in the last ``` ``` block of `reply` (a name or 1 Left, 2 Down, 3 Right, 4 Up). */
export function parseMove(reply: string): Move | undefined {
  const blocks = [...reply.matchAll(/```(.*?)```/gs)];
  const text = blocks.at(-1)?.[1].trim().toLowerCase();
  if (text === undefined) return undefined;
  const byNumber: Record<string, Move> = { "1": "Left", "2": "Down", "3": "Right", "4": "Up" };
  return MOVES.find((m) => m.toLowerCase() === text) ?? byNumber[String(Number(text))];
}

/** The user turn showing `board` at step `step` (Trinity's wording). */
function observation(board: string, step: number, stuck: boolean, remaining: number): string {
  let text = `Current Observation (${step}): \n${board}\n` +
    "You have not achieved the goal, P has not reached G yet. Please give the next action.";
  if (stuck) {
    text += "\nYour last response is invalid. Your position didn't change at all. You may need " +
      "to recheck your thinking process, action outputted, and the format of response. " +
      "Remember, you should only output the NEXT ACTION at each interation in the ``` ```. " +
      "For example, if you want to move up, you should output ```Up```.";
  }
  if (remaining > 0) text += `\nThe maximum number of steps remaining is ${remaining}.`;
  return text;
}

/** The map of `task`: `workflow_args.desc`, else drawn from the row's `size`, `p`, `seed`. */
function mapOf(task: Task, desc: unknown, envMaxSteps: number): string[] {
  if (Array.isArray(desc) && desc.length) return desc.map(String);
  const { size = 1, p = 0.8, seed = 42 } = task.rawTask as Record<string, number>;
  return randomMap(Number(size), Number(p), Number(seed), envMaxSteps);
}

/**
 * Args: `env_max_steps` (8, the path length a drawn map must allow), `agent_max_steps` (10),
 * `is_slippery` (false), `desc` (a list of map rows; default: drawn from the row).
 */
export const frozenLakeWorkflow: WorkflowFactory = {
  description: "multi-turn text game: walk a frozen lake to the goal, avoiding holes",
  defaultArgs: { env_max_steps: 8, agent_max_steps: 10, is_slippery: false, desc: [] },
  usesRewardFn: false,
  rowProblem: (row) =>
    ["size", "p", "seed"].find((k) => row[k] !== undefined && !Number.isFinite(Number(row[k])))
      ? `expected numbers size, p and seed (a map's settings), found ${JSON.stringify(row)}`
      : undefined,
  create(task, { model }) {
    const args = workflowArgs(frozenLakeWorkflow, task);
    const maxSteps = args.agent_max_steps as number;
    const map = mapOf(task, args.desc, args.env_max_steps as number);
    const seed = Number(task.rawTask.seed ?? 42);
    const play = async (runId: number) => {
      const lake = new FrozenLake(map, args.is_slippery as boolean, seed + runId);
      let board = lake.render();
      let stuck = false;
      const first = observation(board, 0, false, maxSteps);
      const game = new Episode(model, [
        { role: "system", content: FROZEN_LAKE_SYSTEM_PROMPT },
        { role: "user", content: first },
      ], task.rolloutArgs);
      let reward = 0;
      while (game.turns < maxSteps) {
        if (game.turns > 0) {
          game.observe(observation(board, game.turns, stuck, maxSteps - game.turns));
        }
        const move = parseMove((await game.act()).text);
        if (move) reward += lake.step(move);
        const next = lake.render();
        stuck = next === board;
        board = next;
        if (lake.done) break;
      }
      return game.toExperience(task, runId, reward, {
        env_steps: game.turns,
        env_done: Number(lake.done),
        test_score: reward,
      });
    };
    return {
      run: () => Promise.all(Array.from({ length: task.rolloutArgs.n }, (_, i) => play(i))),
    };
  },
};

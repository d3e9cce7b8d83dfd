/**
 * `guess_number`: a small multi-turn text environment. The row holds a `secret` integer in
 * [`low`, `high`]; each turn the model guesses (the first integer of its reply) and the
 * environment answers "higher", "lower" or asks again, until the guess is right or `max_turns`
 * pass. The transcript is one experience whose action mask covers the model's tokens only.
 * Computes its own reward: no reward fn is used.
 */

import type { Task } from "../../buffer/task.ts";
import { Episode } from "../episode.ts";
import { workflowArgs, type WorkflowFactory } from "../workflow.ts";

/**
 * Args: `max_turns` (5), `low` (1), `high` (100), `use_chat_template` (true). Runs
 * `rollout_args.n` independent episodes. Reward: `(max_turns - turns + 1) / max_turns` when
 * solved in `turns` turns (1 at the first guess), 0 when not; metrics `accuracy`, `turns`.
 */
export const guessNumberWorkflow: WorkflowFactory = {
  description: "multi-turn: guess a secret number from higher/lower replies",
  defaultArgs: { max_turns: 5, low: 1, high: 100, use_chat_template: true },
  create(task, { model }) {
    const args = workflowArgs(guessNumberWorkflow, task);
    const [maxTurns, low, high] = [args.max_turns, args.low, args.high] as number[];
    if (!Number.isInteger(maxTurns) || maxTurns < 1) {
      throw new Error(
        `Cannot configure workflow "${task.workflow}": key "max_turns" expected an integer >= 1, received ${maxTurns}`,
      );
    }
    const secret = secretOf(task, low, high);
    const question = `I am thinking of an integer between ${low} and ${high}. Guess it. ` +
      `After each guess I will say "higher", "lower" or "correct". Reply with one number only.`;
    const prompt = args.use_chat_template ? [{ role: "user", content: question }] : question;

    const episode = async (runId: number) => {
      const game = new Episode(model, prompt, task.rolloutArgs);
      let solved = false;
      while (!solved && game.turns < maxTurns) {
        const guess = Number((await game.act()).text.match(/-?\d+/)?.[0] ?? NaN);
        solved = guess === secret;
        if (!solved && game.turns < maxTurns) game.observe(hint(guess, secret, low, high));
      }
      const reward = solved ? (maxTurns - game.turns + 1) / maxTurns : 0;
      return game.toExperience(task, runId, reward, {
        accuracy: Number(solved),
        turns: game.turns,
      });
    };
    return {
      run: () => Promise.all(Array.from({ length: task.rolloutArgs.n }, (_, i) => episode(i))),
    };
  },
};

/** The environment's reply to a wrong `guess` (NaN when the reply had no integer). */
function hint(guess: number, secret: number, low: number, high: number): string {
  if (Number.isNaN(guess)) return `Reply with one number between ${low} and ${high}.`;
  return guess < secret ? "higher" : "lower";
}

/** The row's `secret`; throws naming the task unless it is an integer in [low, high]. */
function secretOf(task: Task, low: number, high: number): number {
  const { secret } = task.rawTask;
  if (!Number.isInteger(secret) || (secret as number) < low || (secret as number) > high) {
    throw new Error(
      `Task "${task.taskId}" has "secret" = ${
        JSON.stringify(secret)
      }; expected an integer in [${low}, ${high}]`,
    );
  }
  return secret as number;
}

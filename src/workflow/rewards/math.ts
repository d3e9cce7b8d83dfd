/**
 * `math`: extracts the final answer of a response and compares it with the task's reference
 * answer (`taskAnswer`) as numbers when both are numbers (integers, decimals, `a/b` fractions,
 * `\frac{a}{b}`, with `$`, thousands commas and a trailing `.` ignored), else as normalized
 * strings. No symbolic algebra: `x+1` and `1+x` differ, and percentages are not numbers here.
 */

import { taskAnswer } from "../../buffer/task.ts";
import type { RewardFnFactory } from "./reward_fn.ts";

/** A number in running text: a fraction, a number with thousands commas, or a plain number. */
const NUMBER = /-?\d+\/\d+|-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?|-?\.\d+/g;

/** Relative tolerance of numeric equality (absolute below 1). */
const TOLERANCE = 1e-9;

/**
 * The final answer of `response`: the last `<answer>...</answer>` (its `\boxed{}` content when
 * it has one), else the content of the last `\boxed{...}` (nested braces kept), else the last
 * number; undefined when there is none.
 *
 * @example
 * ```ts
 * extractAnswer("so \\boxed{\\frac{1}{2}} and 7"); // "\\frac{1}{2}"
 * ```
 */
export function extractAnswer(response: string): string | undefined {
  const tagged = [...response.matchAll(/<answer>(.*?)<\/answer>/gs)].at(-1)?.[1];
  if (tagged !== undefined) return lastBoxed(tagged) ?? tagged.trim();
  return lastBoxed(response) ?? response.match(NUMBER)?.at(-1);
}

/** Whether answer `given` equals `reference`: as numbers when both parse, else as text. */
export function answersEqual(given: string, reference: string): boolean {
  const [a, b] = [normalize(given), normalize(reference)];
  const [x, y] = [numericValue(a), numericValue(b)];
  if (x !== undefined && y !== undefined) {
    return Math.abs(x - y) <= TOLERANCE * Math.max(1, Math.abs(y));
  }
  return a === b;
}

/**
 * Reward `correct_reward` (1) when the extracted answer equals the reference, else
 * `wrong_reward` (0, also when no answer is found); metric `accuracy`.
 */
export const mathReward: RewardFnFactory = {
  description: "final answer (<answer>, \\boxed{} or last number) equals the reference",
  defaultArgs: { correct_reward: 1, wrong_reward: 0 },
  compute({ response, task }, args) {
    const reference = taskAnswer(task);
    const answer = extractAnswer(response);
    const correct = answer !== undefined && answersEqual(answer, reference);
    return {
      reward: (correct ? args.correct_reward : args.wrong_reward) as number,
      metrics: { accuracy: Number(correct) },
    };
  },
};

/** The content of the last `\boxed{...}` of `text` whose braces balance. */
function lastBoxed(text: string): string | undefined {
  const open = "\\boxed{";
  for (
    let at = text.lastIndexOf(open);
    at >= 0;
    at = at > 0 ? text.lastIndexOf(open, at - 1) : -1
  ) {
    let depth = 1;
    for (let i = at + open.length; i < text.length; i++) {
      if (text[i] === "{") depth++;
      else if (text[i] === "}" && --depth === 0) return text.slice(at + open.length, i).trim();
    }
  }
}

/** `answer` without math delimiters, spacing, thousands commas or a final period. */
function normalize(answer: string): string {
  const s = answer.trim().replace(/^\$+|\$+$/g, "").replace(/\\[!,;: ]/g, "")
    .replace(/\s+/g, "").replace(/\.$/, "")
    .replace(/^\\[dt]?frac\{([^{}]+)\}\{([^{}]+)\}$/, "$1/$2");
  return /^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$/.test(s) ? s.replaceAll(",", "") : s;
}

/** The value of an integer, decimal or `a/b` fraction; undefined for anything else. */
function numericValue(s: string): number | undefined {
  if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(s)) return Number(s);
  const fraction = s.match(/^([+-]?\d+)\/([+-]?\d+)$/);
  if (fraction && Number(fraction[2]) !== 0) return Number(fraction[1]) / Number(fraction[2]);
}

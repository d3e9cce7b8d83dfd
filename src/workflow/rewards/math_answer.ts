/**
 * Final answers of math text and their equivalence, for the math reward fns: the answer a text
 * marks (`<answer>`, `\boxed{}`, GSM8K's `#### N`, `The answer is N`, DAPO's `Answer: N`), read
 * the same way from a model's response and from a reference field; and equality as numbers
 * (fractions, LaTeX, thousands commas, `$`, units, percent) or else as normalized text, in the
 * spirit of Trinity's math_verify-based reward. No symbolic algebra: `x+1` and `1+x` differ.
 */

import { latexValue } from "./expression.ts";

/** A number in running text: a fraction, a number with thousands commas, or a plain number. */
const NUMBER = /-?\d+\/\d+|-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?|-?\.\d+/g;

/** Relative tolerance of numeric equality (absolute below 1). */
const TOLERANCE = 1e-6;

/**
 * The answer `text` marks, by the first of these it holds: the last `<answer>...</answer>` (its
 * `\boxed{}` content when it has one), the last `\boxed{...}` / `\fbox{...}` (nested braces
 * kept), the rest of the line after the last `####`, after the last `answer is` or `Answer:`;
 * undefined when it marks none.
 *
 * @example
 * ```ts
 * markedAnswer("She pays 5 * 2 = 10.\n#### 10"); // "10"
 * markedAnswer("so \\boxed{\\frac{1}{2}} and 7"); // "\\frac{1}{2}"
 * ```
 */
export function markedAnswer(text: string): string | undefined {
  const tagged = [...text.matchAll(/<answer>(.*?)<\/answer>/gs)].at(-1)?.[1];
  if (tagged !== undefined) return lastBoxed(tagged) ?? tagged.trim();
  const boxed = lastBoxed(text);
  if (boxed !== undefined) return boxed;
  const line = (pattern: RegExp) => [...text.matchAll(pattern)].at(-1)?.[1]?.trim() || undefined;
  return line(/####\s*([^\n]*)/g) ?? line(/\banswer\s*(?:is\b|:)\s*:?\s*([^\n]*)/gi);
}

/**
 * The final answer of a model's response: the one it marks ({@link markedAnswer}), else the
 * whole response when it is one number or expression, else its last number; undefined when
 * there is none.
 *
 * @example
 * ```ts
 * extractAnswer("I get 3, then 1,234.5 in all"); // "1,234.5"
 * ```
 */
export function extractAnswer(response: string): string | undefined {
  const marked = markedAnswer(response);
  if (marked !== undefined) return marked;
  if (latexValue(normalize(response).text) !== undefined) return response.trim();
  return response.match(NUMBER)?.at(-1);
}

/**
 * The answer of a reference field: the one it marks (GSM8K's `...reasoning... #### 10` gives
 * `10`), else the whole field.
 */
export function referenceAnswer(reference: string): string {
  return markedAnswer(reference) ?? reference.trim();
}

/**
 * Whether answer `given` equals `reference`: as numbers when both have a value (a percent also
 * matches its fraction: `50%` = `0.5`), else as normalized text (case, spacing, `\left`,
 * `\text{}` wrappers and a final period ignored).
 *
 * @example
 * ```ts
 * answersEqual("\\dfrac{1}{2}", "0.5"); // true
 * answersEqual("$1,000", "1000 dollars"); // true
 * ```
 */
export function answersEqual(given: string, reference: string): boolean {
  const [a, b] = [normalize(given), normalize(reference)];
  const [x, y] = [latexValue(a.text), latexValue(b.text)];
  if (x !== undefined && y !== undefined) {
    const candidates = a.percent || b.percent
      ? [[x, y], [x / (a.percent ? 100 : 1), y / (b.percent ? 100 : 1)]]
      : [[x, y]];
    return candidates.some(([u, v]) => Math.abs(u - v) <= TOLERANCE * Math.max(1, Math.abs(v)));
  }
  return a.text.toLowerCase() === b.text.toLowerCase();
}

/** An answer with its presentation stripped, and whether it was written as a percent. */
interface NormalizedAnswer {
  text: string;
  percent: boolean;
}

/**
 * `answer` without math delimiters, LaTeX spacing and sizing, `\text{}` units, a leading
 * currency sign, a simple `x =` before the value, thousands commas, a final period and trailing
 * unit words after a number.
 */
function normalize(answer: string): NormalizedAnswer {
  let s = answer.trim()
    .replace(/^\\\(|\\\)$|^\\\[|\\\]$/g, "")
    .replace(/^\$+|\$+$/g, "")
    .replace(/\\[!,;: ]|\\left|\\right|\\displaystyle/g, "")
    .replace(/\^\s*\{?\\circ\}?|°/g, "")
    .replace(/\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}/g, " $1 ")
    .replace(/\\?\$/g, "")
    .replace(/\s+/g, " ").trim()
    .replace(/\.$/, "").trim();
  s = s.replace(/^[a-zA-Z]\w*\s*=\s*(?=\S)/, "");
  const percent = /\\?%$/.test(s);
  if (percent) s = s.replace(/\\?%$/, "").trim();
  while (/\d,\d{3}(?!\d)/.test(s)) s = s.replace(/(\d),(\d{3})(?!\d)/, "$1$2");
  const withoutUnits = s.match(/^(.*\d)\s+[a-zA-Z][a-zA-Z .]*$/)?.[1];
  if (withoutUnits !== undefined && latexValue(withoutUnits) !== undefined) s = withoutUnits;
  if (/^\{[^{}]*\}$/.test(s)) s = s.slice(1, -1);
  return { text: s.replace(/\s+/g, ""), percent };
}

/** The content of the last `\boxed{...}` or `\fbox{...}` of `text` whose braces balance. */
export function lastBoxed(text: string): string | undefined {
  const opens = [...text.matchAll(/\\(?:boxed|fbox)\s*\{/g)].reverse();
  for (const open of opens) {
    let depth = 1;
    const start = open.index + open[0].length;
    for (let i = start; i < text.length; i++) {
      if (text[i] === "{") depth++;
      else if (text[i] === "}" && --depth === 0) return text.slice(start, i).trim();
    }
  }
}

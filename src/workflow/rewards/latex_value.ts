/**
 * The numeric value of a short math answer written in plain text or LaTeX: decimals, `+ - * /`,
 * `^`, parentheses and braces, `\frac{a}{b}` (`\dfrac`, `\tfrac`), `\sqrt{x}`, `\pi`, `\cdot`,
 * `\times`, `\div`, implicit products before a bracket or command (`2\pi`, `3(4)`). Parsed by
 * recursive descent, never `eval`. No variables, functions or symbolic algebra: `x+1` has none.
 */

/** A token: a number, or an operator / bracket / command as written. */
type Token = number | string;

const TOKEN = /\s*(?:(\d+(?:\.\d*)?|\.\d+)|(\\[a-zA-Z]+|[-+*/^(){}]))/y;

/** Commands a value may contain, with the operator they stand for (if they are one). */
const OPERATOR_COMMANDS: Readonly<Record<string, string>> = {
  "\\cdot": "*",
  "\\times": "*",
  "\\div": "/",
};
const VALUE_COMMANDS = new Set(["\\frac", "\\dfrac", "\\tfrac", "\\sqrt", "\\pi"]);

/**
 * The value of `text`, or undefined when it is not a closed numeric expression (a letter, an
 * unknown command, unbalanced brackets, a division by zero or a non-finite result).
 *
 * @example
 * ```ts
 * latexValue("\\frac{3}{4} + 2^{-1}"); // 1.25
 * latexValue("x + 1"); // undefined
 * ```
 */
export function latexValue(text: string): number | undefined {
  const tokens = tokenize(text);
  if (tokens === undefined || tokens.length === 0) return undefined;
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const startsValue = (t: Token | undefined) =>
    t === "(" || t === "{" || (typeof t === "string" && VALUE_COMMANDS.has(t));

  // expression := term (("+" | "-") term)*
  const expression = (): number | undefined => {
    let value = term();
    while (value !== undefined && (peek() === "+" || peek() === "-")) {
      const op = tokens[pos++];
      const right = term();
      if (right === undefined) return undefined;
      value = op === "+" ? value + right : value - right;
    }
    return value;
  };
  // term := unary (("*" | "/") unary | unary starting with a bracket or command)*
  const term = (): number | undefined => {
    let value = unary();
    while (value !== undefined) {
      const next = peek();
      if (next === "*" || next === "/") {
        pos++;
        const right = unary();
        if (right === undefined) return undefined;
        value = next === "*" ? value * right : value / right;
      } else if (startsValue(next)) {
        const right = unary();
        if (right === undefined) return undefined;
        value *= right;
      } else break;
    }
    return value;
  };
  // unary := ("-" | "+") unary | power
  const unary = (): number | undefined => {
    const next = peek();
    if (next === "-" || next === "+") {
      pos++;
      const value = unary();
      return value === undefined ? undefined : next === "-" ? -value : value;
    }
    return power();
  };
  // power := atom ("^" unary)?
  const power = (): number | undefined => {
    const base = atom();
    if (base === undefined || peek() !== "^") return base;
    pos++;
    const exponent = unary();
    return exponent === undefined ? undefined : base ** exponent;
  };
  // atom := number | "(" expression ")" | "{" expression "}" | \frac{}{} | \sqrt{} | \pi
  const atom = (): number | undefined => {
    const token = tokens[pos++];
    if (typeof token === "number") return token;
    if (token === "(" || token === "{") {
      const value = expression();
      return tokens[pos++] === (token === "(" ? ")" : "}") ? value : undefined;
    }
    if (token === "\\pi") return Math.PI;
    if (token === "\\sqrt") {
      const value = atom();
      return value === undefined ? undefined : Math.sqrt(value);
    }
    if (token === "\\frac" || token === "\\dfrac" || token === "\\tfrac") {
      const numerator = atom();
      const denominator = numerator === undefined ? undefined : atom();
      return denominator === undefined ? undefined : numerator! / denominator;
    }
    return undefined;
  };

  const value = expression();
  if (value === undefined || pos !== tokens.length || !Number.isFinite(value)) return undefined;
  return value;
}

/** The tokens of `text`; undefined at a character no value may contain. */
function tokenize(text: string): Token[] | undefined {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  let end = 0;
  for (let match; (match = TOKEN.exec(text)) !== null; end = TOKEN.lastIndex) {
    if (match[1] !== undefined) {
      tokens.push(Number(match[1]));
      continue;
    }
    const symbol = OPERATOR_COMMANDS[match[2]] ?? match[2];
    if (symbol.startsWith("\\") && !VALUE_COMMANDS.has(symbol)) return undefined;
    tokens.push(symbol);
  }
  return text.slice(end).trim() === "" ? tokens : undefined;
}

/**
 * A tiny safe evaluator of integer arithmetic for the countdown reward: `+ - * /`, unary minus
 * and parentheses over non-negative integer literals, parsed by recursive descent (never
 * `eval`). Returns the value and the literals used; no variables, decimals or exponents.
 */

/** An evaluated expression: its value (division is exact, so it may be fractional or infinite). */
export interface ArithmeticResult {
  value: number;
  /** The integer literals of the expression, in order of appearance. */
  numbers: number[];
}

/**
 * Evaluates `text`; undefined when it is not a well-formed expression (an unknown character,
 * unbalanced parentheses, a missing operand, trailing input).
 *
 * @example
 * ```ts
 * evaluateArithmetic("(1 + 2) / 3"); // { value: 1, numbers: [1, 2, 3] }
 * ```
 */
export function evaluateArithmetic(text: string): ArithmeticResult | undefined {
  const tokens = tokenize(text);
  if (tokens === undefined || tokens.length === 0) return undefined;
  const numbers: number[] = [];
  let pos = 0;
  const peek = () => tokens[pos];

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
  // term := factor (("*" | "/") factor)*
  const term = (): number | undefined => {
    let value = factor();
    while (value !== undefined && (peek() === "*" || peek() === "/")) {
      const op = tokens[pos++];
      const right = factor();
      if (right === undefined) return undefined;
      value = op === "*" ? value * right : value / right;
    }
    return value;
  };
  // factor := integer | "-" factor | "(" expression ")"
  const factor = (): number | undefined => {
    const token = tokens[pos++];
    if (typeof token === "number") {
      numbers.push(token);
      return token;
    }
    if (token === "-") {
      const value = factor();
      return value === undefined ? undefined : -value;
    }
    if (token !== "(") return undefined;
    const value = expression();
    return tokens[pos++] === ")" ? value : undefined;
  };

  const value = expression();
  return value === undefined || pos !== tokens.length ? undefined : { value, numbers };
}

/** Integer literals and the characters `+-* /()`; undefined on any other character. */
function tokenize(text: string): (number | string)[] | undefined {
  const tokens: (number | string)[] = [];
  const pattern = /\s*(?:(\d+)|([-+*/()]))/y;
  let end = 0;
  for (let match; (match = pattern.exec(text)) !== null; end = pattern.lastIndex) {
    tokens.push(match[1] === undefined ? match[2] : Number(match[1]));
  }
  return text.slice(end).trim() === "" ? tokens : undefined;
}

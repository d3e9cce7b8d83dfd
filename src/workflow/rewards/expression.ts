/**
 * Safe evaluation of the short expressions reward fns meet, by one recursive-descent parser
 * (never `eval`) in two dialects: `evaluateArithmetic`, integer arithmetic `+ - * /`, unary
 * minus and parentheses (countdown's equations), and `latexValue`, a math answer in plain text or
 * LaTeX (decimals, `^`, braces, `\frac`, `\sqrt`, `\pi`, `\cdot`, `\times`, `\div`, implicit
 * products before a bracket or command). No variables, functions or symbolic algebra.
 */

/** An evaluated expression: its value and the number literals it used, in order. */
export interface ArithmeticResult {
  value: number;
  numbers: number[];
}

/** A token: a number, or an operator / bracket / command as written. */
type Token = number | string;

/** What a dialect accepts. */
interface Dialect {
  /** Matches one token at a time: group 1 a number, group 2 anything else. */
  token: RegExp;
  /** Brackets, commands and `^` beyond `+ - * / ( )`. */
  latex: boolean;
}

const ARITHMETIC: Dialect = { token: /\s*(?:(\d+)|([-+*/()]))/y, latex: false };
const LATEX: Dialect = {
  token: /\s*(?:(\d+(?:\.\d*)?|\.\d+)|(\\[a-zA-Z]+|[-+*/^(){}]))/y,
  latex: true,
};

/** LaTeX commands that stand for an operator. */
const OPERATOR_COMMANDS: Readonly<Record<string, string>> = {
  "\\cdot": "*",
  "\\times": "*",
  "\\div": "/",
};
const VALUE_COMMANDS = new Set(["\\frac", "\\dfrac", "\\tfrac", "\\sqrt", "\\pi"]);

/**
 * Evaluates integer arithmetic; undefined when `text` is not a well-formed expression (another
 * character, unbalanced parentheses, a missing operand). Division is exact, so the value may be
 * fractional or infinite.
 *
 * @example
 * ```ts
 * evaluateArithmetic("(1 + 2) / 3"); // { value: 1, numbers: [1, 2, 3] }
 * ```
 */
export function evaluateArithmetic(text: string): ArithmeticResult | undefined {
  return evaluate(text, ARITHMETIC);
}

/**
 * The value of a math answer, or undefined when it is not a closed numeric expression (a letter,
 * an unknown command, unbalanced brackets, a non-finite result such as a division by zero).
 *
 * @example
 * ```ts
 * latexValue("\\frac{3}{4} + 2^{-1}"); // 1.25
 * latexValue("x + 1"); // undefined
 * ```
 */
export function latexValue(text: string): number | undefined {
  const value = evaluate(text, LATEX)?.value;
  return value !== undefined && Number.isFinite(value) ? value : undefined;
}

/** `text` parsed and evaluated in `dialect`. */
function evaluate(text: string, dialect: Dialect): ArithmeticResult | undefined {
  const tokens = tokenize(text, dialect);
  if (tokens === undefined || tokens.length === 0) return undefined;
  const numbers: number[] = [];
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const startsValue = (t: Token | undefined) =>
    dialect.latex && (t === "(" || t === "{" || (typeof t === "string" && VALUE_COMMANDS.has(t)));

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
  // term := unary (("*" | "/") unary | unary starting with a bracket or command (LaTeX))*
  const term = (): number | undefined => {
    let value = unary();
    while (value !== undefined) {
      const next = peek();
      const explicit = next === "*" || next === "/";
      if (!explicit && !startsValue(next)) break;
      if (explicit) pos++;
      const right = unary();
      if (right === undefined) return undefined;
      value = next === "/" ? value / right : value * right;
    }
    return value;
  };
  // unary := ("-" | "+" (LaTeX)) unary | power
  const unary = (): number | undefined => {
    const next = peek();
    if (next === "-" || (dialect.latex && next === "+")) {
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
    if (typeof token === "number") {
      numbers.push(token);
      return token;
    }
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
  return value === undefined || pos !== tokens.length ? undefined : { value, numbers };
}

/** The tokens of `text` in `dialect`; undefined at a character it does not accept. */
function tokenize(text: string, { token, latex }: Dialect): Token[] | undefined {
  const tokens: Token[] = [];
  token.lastIndex = 0;
  let end = 0;
  for (let match; (match = token.exec(text)) !== null; end = token.lastIndex) {
    if (match[1] !== undefined) {
      tokens.push(Number(match[1]));
      continue;
    }
    const symbol = OPERATOR_COMMANDS[match[2]] ?? match[2];
    if (latex && symbol.startsWith("\\") && !VALUE_COMMANDS.has(symbol)) return undefined;
    tokens.push(symbol);
  }
  return text.slice(end).trim() === "" ? tokens : undefined;
}

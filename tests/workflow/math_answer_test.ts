/**
 * The math answer readers and the `math` reward on GSM8K's own reference fields: every answer
 * written as `\boxed{N}`, `#### N`, `The answer is N.` or a plain final number scores 1 against
 * the reference `...reasoning... #### N`, and a wrong N scores 0; LaTeX / fraction / unit
 * equivalences; and the LaTeX value parser.
 */

import { configure } from "../../src/algorithm/registry.ts";
import { latexValue } from "../../src/workflow/rewards/expression.ts";
import {
  answersEqual,
  extractAnswer,
  markedAnswer,
  referenceAnswer,
} from "../../src/workflow/rewards/math_answer.ts";
import { computeReward, REWARD_FUNCTIONS } from "../../src/workflow/rewards/mod.ts";
import { assertEquals } from "../_asserts.ts";
import { makeTask } from "./_scripted_model.ts";

/** Reference fields of GSM8K's train split (`answer` column) and their final numbers. */
const GSM8K: readonly [string, number][] = [
  [
    "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips altogether in April and May.\n#### 72",
    72,
  ],
  [
    "Weng earns 12/60 = $<<12/60=0.2>>0.2 per minute.\nWorking 50 minutes, she earned 0.2 x 50 = $<<0.2*50=10>>10.\n#### 10",
    10,
  ],
  [
    "In the beginning, Betty has only 100 / 2 = $<<100/2=50>>50.\nBetty's grandparents gave her 15 * 2 = $<<15*2=30>>30.\nThis means, Betty needs 100 - 50 - 30 - 15 = $<<100-50-30-15=5>>5 more.\n#### 5",
    5,
  ],
  [
    "Maila read 12 x 2 = <<12*2=24>>24 pages today.\nSo she was able to read a total of 12 + 24 = <<12+24=36>>36 pages since yesterday.\nThere are 120 - 36 = <<120-36=84>>84 pages left to be read.\nSince she wants to read half of the remaining pages tomorrow, then she should read 84/2 = <<84/2=42>>42 pages.\n#### 42",
    42,
  ],
  [
    "He writes each friend 3*2=<<3*2=6>>6 pages a week\nSo he writes 6*2=<<6*2=12>>12 pages every week\nThat means he writes 12*52=<<12*52=624>>624 pages a year\n#### 624",
    624,
  ],
];

/** The ways a model writes its final answer `n`. */
const WRITTEN_AS: readonly ((n: number) => string)[] = [
  (n) => `Step by step... so the result is \\boxed{${n}}.`,
  (n) => `Reasoning first.\n#### ${n}`,
  (n) => `We add them up. The answer is ${n}.`,
  (n) => `Answer: ${n}`,
  (n) => `<think>24 then 72</think> <answer>${n}</answer>`,
  (n) => `${n}`,
  (n) => `So she has $${n} left in total, i.e. ${n}`,
];

async function mathScore(response: string, reference: string): Promise<number> {
  const task = makeTask({ answer: reference });
  return (await computeReward(configure(REWARD_FUNCTIONS, "math"), task, response)).reward;
}

Deno.test("math reward: GSM8K's references pay every answer format, wrong numbers get 0", async () => {
  for (const [reference, n] of GSM8K) {
    assertEquals(referenceAnswer(reference), String(n));
    for (const write of WRITTEN_AS) {
      assertEquals(await mathScore(write(n), reference), 1, `${write(n)} vs #### ${n}`);
      assertEquals(await mathScore(write(n + 1), reference), 0, `${write(n + 1)} vs #### ${n}`);
    }
  }
});

Deno.test("math reward: the reference may itself be boxed, tagged or a bare value", async () => {
  assertEquals(await mathScore("\\boxed{0.5}", "The answer is $\\boxed{\\frac{1}{2}}$."), 1);
  assertEquals(await mathScore("1/2", "<answer>0.5</answer>"), 1);
  assertEquals(await mathScore("\\boxed{\\dfrac{3}{4}}", "0.75"), 1);
  assertEquals(await mathScore("\\boxed{\\dfrac{3}{5}}", "0.75"), 0);
  assertEquals(await mathScore("no number at all", "7"), 0);
});

Deno.test("math answers: marks are read in order <answer>, \\boxed, ####, answer is / Answer:", () => {
  assertEquals(markedAnswer("\\boxed{1} then \\boxed{\\frac{1}{2}} and 5"), "\\frac{1}{2}");
  assertEquals(markedAnswer("\\boxed{x^{2}+\\frac{1}{2}}"), "x^{2}+\\frac{1}{2}");
  assertEquals(markedAnswer("\\fbox{9} and \\boxed{3} and a broken \\boxed{4"), "3");
  assertEquals(markedAnswer("#### 1,000\nfootnote"), "1,000");
  assertEquals(markedAnswer("Thus the final answer is: -7."), "-7.");
  assertEquals(markedAnswer("lots of steps\nAnswer: \\frac{2}{3}"), "\\frac{2}{3}");
  assertEquals(markedAnswer("<answer>so \\boxed{7}</answer> \\boxed{8}"), "7");
  assertEquals(markedAnswer("no marks, 42"), undefined);
  assertEquals(markedAnswer("the answer isn't 3; it is 4"), undefined);
  // Unmarked responses: the whole one when it is a value, else the last number.
  assertEquals(extractAnswer(" \\frac{1}{2} "), "\\frac{1}{2}");
  assertEquals(extractAnswer("first 3, then 1,234.5 is it."), "1,234.5");
  assertEquals(extractAnswer("half is 1/2"), "1/2");
  assertEquals(extractAnswer("no digits here"), undefined);
});

Deno.test("math answers: numeric, fraction, LaTeX, currency, unit and percent equivalence", () => {
  const equal: [string, string][] = [
    ["\\frac{1}{2}", "0.5"],
    ["1/2", "\\dfrac{1}{2}"],
    ["\\tfrac{1}{2}", "0.5"],
    ["1,000", "1000"],
    ["$10", "10"],
    ["\\$10.00", "10"],
    ["10.0", "10"],
    ["10 \\text{ dollars}", "10"],
    ["\\text{10}", "10"],
    ["18 apples", "18"],
    ["50\\%", "0.5"],
    ["50%", "50"],
    ["x = 5", "5"],
    ["\\left(3\\right)", "3"],
    ["2\\sqrt{4}", "4"],
    ["90^\\circ", "90"],
    ["-3", "-3.0"],
    [".50", "1/2"],
    ["42.", "42"],
    ["1/0", "1/0 "],
    ["\\pi", "\\pi"],
    ["A", "a"],
  ];
  for (const [given, reference] of equal) {
    assertEquals(answersEqual(given, reference), true, `${given} == ${reference}`);
  }
  const different: [string, string][] = [
    ["0.51", "1/2"],
    ["x+1", "1+x"],
    ["1,2", "12"],
    ["51%", "0.5"],
    ["10 apples", "11"],
  ];
  for (const [given, reference] of different) {
    assertEquals(answersEqual(given, reference), false, `${given} != ${reference}`);
  }
});

Deno.test("latex values: operators, precedence, commands and what has no value", () => {
  assertEquals(latexValue("1 + 2 * 3"), 7);
  assertEquals(latexValue("(1 + 2) * 3"), 9);
  assertEquals(latexValue("2^{3} - 2^-1"), 7.5);
  assertEquals(latexValue("-\\frac{3}{4}"), -0.75);
  assertEquals(latexValue("6 \\div 4 \\cdot 2"), 3);
  assertEquals(latexValue("\\sqrt{16} \\times 2"), 8);
  assertEquals(latexValue("2\\pi"), 2 * Math.PI);
  for (const bad of ["x + 1", "1/0", "(1", "\\log{2}", "", "1 2"]) {
    assertEquals(latexValue(bad), undefined, bad);
  }
});

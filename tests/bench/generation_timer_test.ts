import { assertEquals, assertThrows } from "../_asserts.ts";
import { GenerationTimer } from "../../bench/_generation_timer.ts";
import type { Rollout, RolloutModel } from "../../src/workflow/rollout_model.ts";
import { TOKENIZER } from "../workflow/_scripted_model.ts";

/** A model whose calls stay in flight until the test finishes them, in any order. */
class GatedModel implements RolloutModel {
  readonly policyVersion = 3;
  readonly tokenizer = TOKENIZER;
  readonly pending: ((rollouts: Rollout[]) => void)[] = [];

  generate(): Promise<Rollout[]> {
    return new Promise((resolve) => this.pending.push(resolve));
  }

  chat(): Promise<Rollout[]> {
    return this.generate();
  }
}

Deno.test("GenerationTimer counts the union of in-flight calls, overlapping ones once", async () => {
  const inner = new GatedModel();
  let clock = 0;
  const timer = new GenerationTimer(inner, () => clock);
  assertEquals(timer.policyVersion, 3);
  const first = timer.generate("1+2=");
  clock = 5;
  const second = timer.chat([{ role: "user", content: "3+4=" }]);
  assertThrows(() => timer.takeSeconds(), Error, "2 calls are in flight");
  clock = 10;
  const answer: Rollout[] = [];
  inner.pending[0](answer);
  assertEquals(await first === answer, true, "the inner result is passed on unchanged");
  clock = 20;
  inner.pending[1]([]);
  await second;
  clock = 30;
  const third = timer.generate([1, 2]);
  clock = 35;
  inner.pending[2]([]);
  await third;
  // In flight over [0, 20] (two calls) and [30, 35]: 25 ms.
  assertEquals(timer.takeSeconds(), 0.025);
  assertEquals(timer.takeSeconds(), 0, "taking the time starts a new count");
});

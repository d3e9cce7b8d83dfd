import { assertEquals } from "../_asserts.ts";
import { assertClose } from "../_assert_close.ts";
import { CharTokenizer } from "../../src/model/char_tokenizer.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { createModel, type PolicyModel } from "../../src/model/policy.ts";
import {
  PolicyRolloutModel,
  type PolicyRolloutOptions,
} from "../../src/workflow/policy_rollout_model.ts";
import type { RolloutOptions } from "../../src/workflow/rollout_model.ts";
import { tinyLlamaConfig } from "../_tiny_llama.ts";

const tokenizer = CharTokenizer.fromText("abcdefgh +=0123456789");

async function tinyModel(): Promise<PolicyModel> {
  const raw = tinyLlamaConfig(tokenizer.vocabSize, {
    max_position_embeddings: 64,
    eos_token_id: tokenizer.eosId,
  });
  return await createModel(raw, initParameters(parseHfConfig(raw), 3, 0.5), { tokenizer });
}

const OPTIONS: PolicyRolloutOptions = {
  maxPromptTokens: 16,
  maxResponseTokens: 8,
  defaults: { temperature: 1, topP: 1, topK: 0 },
  seed: 1,
};

/** Runs `fn` with a fresh rollout model over a tiny char-level model. */
async function withRollouts(
  options: Partial<PolicyRolloutOptions>,
  fn: (rollouts: PolicyRolloutModel, model: PolicyModel) => Promise<void>,
): Promise<void> {
  const model = await tinyModel();
  const rollouts = new PolicyRolloutModel(model, { ...OPTIONS, ...options });
  try {
    await fn(rollouts, model);
  } finally {
    rollouts.destroy();
    model.destroy();
  }
}

Deno.test("concurrent calls share engine batches and each gets what it gets alone", async () => {
  await withRollouts({}, async (rollouts, model) => {
    const calls: [string, RolloutOptions][] = [
      ["1+2=", { temperature: 0 }],
      ["3+4=", { n: 3, seed: 11 }],
      ["abc", { n: 2, seed: 12, temperature: 0.7, topK: 5 }],
      ["9", { seed: 13, topP: 0.8, maxTokens: 3 }],
      ["12+34=", { n: 2, seed: 14 }],
      ["h", { temperature: 0, maxTokens: 5 }],
      ["ggg ", { seed: 15, temperature: 1.3 }],
      ["0=", { n: 4, seed: 16, temperature: 0.5 }],
    ];
    const together = await Promise.all(calls.map(([p, o]) => rollouts.generate(p, o)));
    assertEquals(rollouts.stats.batches < calls.length, true, `${rollouts.stats.batches}`);
    assertEquals(rollouts.stats.requests, calls.length);
    for (const [i, [prompt, options]] of calls.entries()) {
      const alone = await rollouts.generate(prompt, options);
      assertEquals(together[i].length, options.n ?? 1);
      assertEquals(
        together[i].map((r) => r.responseTokens),
        alone.map((r) => r.responseTokens),
        `call ${i}`,
      );
      const temperature = options.temperature || 1; // greedy log-probs are at T = 1
      const forced = await model.logprobs(
        together[i].map((r) => [...r.promptTokens, ...r.responseTokens]),
        { temperature },
      );
      together[i].forEach((r, j) => {
        assertEquals(r.promptTokens, tokenizer.encode(prompt));
        assertClose(r.logprobs, forced[j].slice(r.promptTokens.length - 1), {
          atol: 1e-4,
          rtol: 1e-4,
          label: `call ${i} sample ${j}`,
        });
      });
    }
  });
});

Deno.test("each rollout carries the policy version of when its batch started", async () => {
  await withRollouts({}, async (rollouts) => {
    const [before] = await rollouts.generate("1+");
    assertEquals(before.policyVersion, 0);
    rollouts.setPolicyVersion(3);
    assertEquals(rollouts.policyVersion, 3);
    const pending = rollouts.generate("1+", { n: 2 });
    rollouts.setPolicyVersion(4); // before the batch starts (the next macrotask)
    assertEquals((await pending).map((r) => r.policyVersion), [4, 4]);
  });
});

Deno.test("long prompts keep their last maxPromptTokens; maxTokens is capped", async () => {
  await withRollouts({ maxPromptTokens: 5, maxResponseTokens: 6 }, async (rollouts) => {
    const ids = tokenizer.encode("12345678+9=");
    const [cut] = await rollouts.generate(ids, { maxTokens: 50, temperature: 0 });
    assertEquals(cut.promptTokens, ids.slice(-5));
    assertEquals(cut.responseTokens.length <= 6, true);
    if (cut.finishReason === "length") assertEquals(cut.responseTokens.length, 6);
    const [same] = await rollouts.generate("78+9=", { temperature: 0 });
    assertEquals(same.responseTokens, cut.responseTokens);
  });
});

Deno.test("a stop text ends a sample, is kept as its last token and left out of its text", async () => {
  await withRollouts({}, async (rollouts) => {
    const options = { seed: 8, n: 4 };
    const free = await rollouts.generate("5+5=", options);
    const sample = free.find((r) => r.finishReason === "length" && r.responseTokens.length > 3);
    assertEquals(sample !== undefined, true, "a sample of full length");
    const stopId = sample!.responseTokens[2];
    const stopText = tokenizer.decode([stopId]);
    const stopped = await rollouts.generate("5+5=", { ...options, stop: [stopText] });
    const j = free.indexOf(sample!);
    const end = sample!.responseTokens.indexOf(stopId) + 1;
    assertEquals(stopped[j].finishReason, "stop");
    assertEquals(stopped[j].responseTokens, sample!.responseTokens.slice(0, end));
    assertEquals(stopped[j].text, tokenizer.decode(sample!.responseTokens.slice(0, end - 1)));
    const error = await rollouts.generate("5", { stop: ["ab"] }).then(
      () => "",
      (err: Error) => err.message,
    );
    assertEquals(
      error,
      `Cannot use stop text "ab": it must be one token, and the tokenizer encodes it as 2`,
    );
  });
});

Deno.test("chat applies the chat template; unseeded calls follow the run's seed", async () => {
  const runCalls = (rollouts: PolicyRolloutModel) =>
    Promise.all([rollouts.chat([{ role: "user", content: "1+1=" }]), rollouts.generate("7")]);
  let first: string[] = [];
  await withRollouts({ seed: 9 }, async (rollouts) => {
    const [[reply], [other]] = await runCalls(rollouts);
    assertEquals(reply.promptTokens, tokenizer.encode("<bos>1+1=<eos>"));
    first = [reply.responseTokens.join(), other.responseTokens.join()];
  });
  await withRollouts({ seed: 9 }, async (rollouts) => {
    const [[reply], [other]] = await runCalls(rollouts);
    assertEquals([reply.responseTokens.join(), other.responseTokens.join()], first);
  });
});

Deno.test("minResponseTokens: stop tokens wait until a response has that many tokens", async () => {
  // EOS pushed far up: without a minimum every sample is EOS alone.
  const eos = tokenizer.eosId!;
  const options = { n: 3, seed: 4, logitBias: { [eos]: 100 } };
  await withRollouts({}, async (rollouts) => {
    for (const r of await rollouts.generate("5+5=", options)) {
      assertEquals([r.responseTokens, r.finishReason], [[eos], "stop"]);
    }
  });
  await withRollouts({ minResponseTokens: 3 }, async (rollouts) => {
    for (const r of await rollouts.generate("5+5=", options)) {
      assertEquals(r.responseTokens.length, 4);
      assertEquals(r.responseTokens.slice(0, 3).includes(eos), false);
      assertEquals([r.responseTokens[3], r.finishReason], [eos, "stop"]);
    }
  });
});

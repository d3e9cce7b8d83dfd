/**
 * `deno run -A bench/kl_dtype.ts`: what storing the KL reference in bf16 instead of f32 does to
 * the KL term. A random model of a real shape is the reference (f32, and the same weights
 * narrowed to bf16 on the GPU, as a frozen f32 checkpoint would be stored); the policy is that
 * model after a few SFT steps at Trinity's GSM8K learning rate, so that the KL is not zero. For
 * sequences of GSM8K length, per token: the log-ratio against each reference, k2 = (d^2) / 2 (rft's
 * and Trinity's GRPO default) and k3, token means, and their difference; the largest per-token
 * change of the reference's log-prob. Nothing is timed.
 */

import { getGpu } from "../src/gpu/device.ts";
import { parseHfConfig } from "../src/model/hf_config.ts";
import { initParameters } from "../src/model/init.ts";
import { createModel } from "../src/model/policy.ts";
import { copyModel } from "../src/model/weight_transfer.ts";
import { POLICY_LOSS_FN } from "../src/algorithm/policy_loss/mod.ts";
import { TrainStep } from "../src/trainer/train_step.ts";
import { configure } from "../src/util/registry.ts";
import { mulberry32 } from "../src/util/random.ts";
import { benchArgs, integerFlag } from "./_flags.ts";
import { modelShape } from "./_model_shapes.ts";
import { writeJsonReport } from "./_report.ts";

const SCRIPT = "bench/kl_dtype.ts";

const HELP = `Usage: deno run -A ${SCRIPT} [--model qwen2.5-0.5b] [--rows 8] [--len 256] [--steps 3]
  [--json FILE]
--model  a shape of bench/_model_shapes.ts (random weights)
--rows, --len  sequences scored (prompt half, response half)
--steps  SFT steps (lr 1e-5) from the reference to the policy`;

/** Token means of k2 and k3 of the log-ratios `policy - reference` over the response tokens. */
function klTerms(policy: number[][], reference: number[][], from: number) {
  let k2 = 0, k3 = 0, n = 0;
  policy.forEach((row, i) => {
    for (let t = from; t < row.length; t++) {
      const d = row[t] - reference[i][t];
      k2 += d * d / 2;
      k3 += Math.exp(-d) - 1 + d;
      n++;
    }
  });
  return { k2: k2 / n, k3: k3 / n };
}

async function main() {
  const { values } = benchArgs(SCRIPT, {
    args: Deno.args,
    options: {
      model: { type: "string", default: "qwen2.5-0.5b" },
      rows: { type: "string", default: "8" },
      len: { type: "string", default: "256" },
      steps: { type: "string", default: "3" },
      json: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return console.log(HELP);
  const rows = integerFlag(SCRIPT, "rows", values.rows);
  const len = integerFlag(SCRIPT, "len", values.len, 4);
  const gpu = await getGpu();
  const raw = modelShape(values.model);
  const vocab = parseHfConfig(raw).vocabSize;
  const next = mulberry32(11);
  const sequences = Array.from(
    { length: rows },
    () => Array.from({ length: len }, () => Math.floor(next() * vocab)),
  );
  const prompt = len / 2;
  using reference = await createModel(raw, initParameters(parseHfConfig(raw), 1), { gpu });
  using referenceBf16 = await copyModel(reference, "bf16");
  using policy = await copyModel(reference, "f32");
  const step = new TrainStep(policy, {
    policyLoss: configure(POLICY_LOSS_FN, "sft"),
    optimizer: { lr: 1e-5 },
  });
  const experiences = sequences.map((tokens, i) => ({
    tokens,
    promptLength: prompt,
    actionMask: tokens.map((_, t) => Number(t >= prompt)),
    logprobs: tokens.map(() => 0),
    reward: 0,
    info: { taskId: `t${i}`, runId: 0, policyVersion: 0, eid: `t${i}-0` },
  }));
  for (let s = 0; s < integerFlag(SCRIPT, "steps", values.steps, 0); s++) {
    await step.step(experiences);
  }
  step.destroy();
  const from = prompt - 1;
  const [lpPolicy, lpF32, lpBf16] = [
    await policy.logprobs(sequences, { from }),
    await reference.logprobs(sequences, { from }),
    await referenceBf16.logprobs(sequences, { from }),
  ];
  const f32 = klTerms(lpPolicy, lpF32, from);
  const bf16 = klTerms(lpPolicy, lpBf16, from);
  let worst = 0;
  lpF32.forEach((row, i) => {
    for (let t = from; t < row.length; t++) {
      worst = Math.max(worst, Math.abs(row[t] - lpBf16[i][t]));
    }
  });
  const line = (name: string, a: number, b: number) =>
    `${name}: f32 reference ${a.toExponential(3)}, bf16 reference ${b.toExponential(3)}, ` +
    `difference ${Math.abs(a - b).toExponential(3)}`;
  console.log(
    `${values.model}, ${rows} x ${len} tokens (response ${len - prompt}), policy ${values.steps} ` +
      `SFT steps from the reference at lr 1e-5`,
  );
  console.log(line("KL k2 (token mean)", f32.k2, bf16.k2));
  console.log(line("KL k3 (token mean)", f32.k3, bf16.k3));
  console.log(`largest change of a reference log-prob: ${worst.toExponential(3)}`);
  if (values.json) {
    await writeJsonReport(values.json, "kl_dtype", gpu, { model: values.model, f32, bf16, worst });
  }
}

if (import.meta.main) await main();

/**
 * RoPE variants: the f32 inverse-frequency tables the kernels take against the f64 reference of
 * HF's formulas (the shipped parameters of Llama 3.2, Gemma 3 and Qwen2.5's yarn), hand-derived
 * values of each band of llama3, yarn's attention factor, and how configs spell a variant
 * (`rope_scaling` with `rope_type` or the legacy `type`, transformers v5's `rope_parameters`).
 */

import { parseHfConfig } from "../../src/model/hf_config.ts";
import { referenceRope } from "../../src/model/rope_reference.ts";
import { ropeFrequencies, type RopeScaling } from "../../src/model/rope_scaling.ts";
import { ropeInvFreq } from "../../src/ops/rope.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertThrows } from "../_asserts.ts";
import { tinyLlamaConfig } from "../_tiny_llama.ts";

/** Llama 3.2's `rope_scaling` (1B and 3B ship the same). */
const LLAMA3: RopeScaling = {
  type: "llama3",
  factor: 32,
  lowFreqFactor: 1,
  highFreqFactor: 4,
  originalMaxPositions: 8192,
};

/** Qwen2.5's long-context yarn (factor 4 over 32768 positions), HF's defaults filled. */
const YARN: RopeScaling = {
  type: "yarn",
  factor: 4,
  originalMaxPositions: 32768,
  betaFast: 32,
  betaSlow: 1,
  attentionFactor: 0.1 * Math.log(4) + 1,
  truncate: true,
};

/** longrope over 8 rotated dims (short factors in use: within the original length). */
const LONGROPE: RopeScaling = {
  type: "longrope",
  shortFactor: [1, 1.1, 1.5, 2.5],
  longFactor: [1, 4, 16, 40],
  originalMaxPositions: 4096,
  attentionFactor: Math.sqrt(1 + Math.log(32) / Math.log(4096)),
};

const CASES: [string, number, RopeScaling, number][] = [
  ["default (SmolLM2)", 100000, { type: "default" }, 64],
  ["linear factor 8 (Gemma 3's global layers)", 1e6, { type: "linear", factor: 8 }, 256],
  ["llama3 (Llama 3.2)", 500000, LLAMA3, 64],
  ["llama3 at a small head dim", 500000, LLAMA3, 8],
  ["yarn (Qwen2.5 long context)", 1e6, YARN, 128],
  ["yarn without truncation", 10000, { ...YARN, truncate: false }, 64],
  ["dynamic within max_position_embeddings", 10000, { type: "dynamic", factor: 2 }, 64],
  ["longrope (Phi-3.5, Phi-4-mini) within the original length", 10000, LONGROPE, 8],
];

for (const [label, theta, scaling, headDim] of CASES) {
  Deno.test(`rope scaling: ${label}: the f32 table matches the f64 reference`, () => {
    const got = ropeFrequencies(theta, scaling, headDim);
    const want = referenceRope(theta, scaling, headDim, 100, 4096);
    assertEquals(got.invFreq.length, headDim / 2);
    // f32 rounding of the default table (HF's, torch f32); llama3's smoothing of the middle band
    // amplifies it about 3x.
    assertClose(got.invFreq, want.invFreq, { atol: 0, rtol: 3e-7, label });
    assertEquals(got.attentionFactor, want.attentionFactor);
  });
}

Deno.test("rope scaling: llama3 keeps high frequencies, divides low ones, smooths the middle", () => {
  const base = ropeInvFreq(500000, 64);
  const { invFreq } = ropeFrequencies(500000, LLAMA3, 64);
  // i = 0: wavelength 2 pi < 8192 / 4.
  assertEquals(invFreq[0], base[0]);
  // i = 31: wavelength ~2.1e6 > 8192: divided by 32.
  assertClose([invFreq[31]], [base[31] / 32], { atol: 0, rtol: 1e-7 });
  // i = 16: wavelength 2 pi / 500000^-0.5 ~ 4443, between 2048 and 8192: smoothed.
  const wavelen = 2 * Math.PI / base[16];
  const smooth = (8192 / wavelen - 1) / 3;
  const expected = (1 - smooth) * base[16] / 32 + smooth * base[16];
  assertClose([invFreq[16]], [expected], { atol: 0, rtol: 1e-7 });
});

Deno.test("rope scaling: dynamic NTK scales the base only past max_position_embeddings", () => {
  const scaling: RopeScaling = { type: "dynamic", factor: 2 };
  const within = referenceRope(10000, scaling, 64, 4096, 4096);
  assertClose(within.invFreq, referenceRope(10000, { type: "default" }, 64).invFreq, {
    atol: 0,
    rtol: 1e-15,
  });
  // At 8192 of 4096 positions: base 10000 * (2 * 2 - 1)^(64 / 62).
  const past = referenceRope(10000, scaling, 64, 8192, 4096);
  const base = 10000 * 3 ** (64 / 62);
  assertClose(past.invFreq, Array.from({ length: 32 }, (_, i) => base ** (-2 * i / 64)), {
    atol: 0,
    rtol: 1e-12,
  });
});

Deno.test("rope scaling: yarn's attention factor from factor, mscale or the config", () => {
  const read = (rope_scaling: Record<string, unknown>) => {
    const rotary = parseHfConfig(tinyLlamaConfig(11, { rope_scaling })).layers[0].rotary!;
    return rotary.attentionFactor;
  };
  assertEquals(read({ rope_type: "yarn", factor: 4 }), 0.1 * Math.log(4) + 1);
  assertEquals(read({ rope_type: "yarn", factor: 4, attention_factor: 1.5 }), 1.5);
  const mscale = (m: number) => 0.1 * m * Math.log(40) + 1;
  assertEquals(
    read({ rope_type: "yarn", factor: 40, mscale: 1, mscale_all_dim: 0.707 }),
    mscale(1) / mscale(0.707),
  );
});

Deno.test("rope scaling: longrope's attention factor from max over original positions, or given", () => {
  const read = (more: Record<string, unknown>, rope_scaling: Record<string, unknown>) => {
    const raw = tinyLlamaConfig(11, { max_position_embeddings: 2048, ...more, rope_scaling });
    return parseHfConfig(raw).layers[0].rotary!.attentionFactor;
  };
  const factors = { type: "longrope", short_factor: [1, 1, 1, 1], long_factor: [1, 2, 3, 4] };
  assertEquals(
    read({ original_max_position_embeddings: 256 }, factors),
    Math.sqrt(1 + Math.log(8) / Math.log(256)),
  );
  assertEquals(read({}, { ...factors, original_max_position_embeddings: 2048 }), 1);
  assertEquals(read({}, { ...factors, factor: 4, attention_factor: 1.25 }), 1.25);
});

Deno.test("rope scaling: rope_type, the legacy type and transformers v5's rope_parameters read alike", () => {
  const llama3 = {
    factor: 32,
    low_freq_factor: 1,
    high_freq_factor: 4,
    original_max_position_embeddings: 8192,
  };
  const spellings = [
    tinyLlamaConfig(11, { rope_theta: 500000, rope_scaling: { rope_type: "llama3", ...llama3 } }),
    tinyLlamaConfig(11, { rope_theta: 500000, rope_scaling: { type: "llama3", ...llama3 } }),
    tinyLlamaConfig(11, {
      rope_theta: undefined,
      rope_parameters: { rope_type: "llama3", rope_theta: 500000, ...llama3 },
    }),
  ];
  const [first, ...others] = spellings.map((raw) => parseHfConfig(raw).layers[0].rotary!);
  assertEquals(first.scaling, LLAMA3);
  assertEquals(first.theta, 500000);
  for (const other of others) assertEquals(other, first);
});

Deno.test("rope scaling: a variant missing a parameter names the key", () => {
  assertThrows(
    () => parseHfConfig(tinyLlamaConfig(11, { rope_scaling: { rope_type: "linear" } })),
    Error,
    'key "rope_scaling.factor" is undefined; expected a positive number',
  );
  assertThrows(
    () =>
      parseHfConfig(
        tinyLlamaConfig(11, { rope_parameters: { rope_type: "default", rope_theta: -1 } }),
      ),
    Error,
    'key "rope_parameters.rope_theta" is -1; expected a positive number',
  );
});

/**
 * The GPU attention kernels (FlashAttention-2 style, `flash64` and `flash32`), forced here on the
 * CPU adapter: the forward's output and saved log-sum-exp against the f64 reference on odd
 * sequence lengths (1 to 130, over several key tiles and workgroups), head dims 1 to 256 (64, 80,
 * 128 and 256 among them), GQA ratios 1 to 4, packed, padded and scattered segments, sliding
 * windows and sharp scores; the lse of the register kernels too; the backward against finite
 * differences on small problems and against the register kernels' gradients on the large head
 * dims; determinism; head dims the kernels refuse.
 */

import { getGpu } from "../../src/gpu/device.ts";
import { grad } from "../../src/graph/autodiff.ts";
import type { Tensor } from "../../src/graph/tensor.ts";
import { causalAttention } from "../../src/ops/attention.ts";
import type { AttentionKernel } from "../../src/ops/attention_kernels.ts";
import { FLASH_MAX_HEAD_DIM, flashMisfit } from "../../src/ops/flash_attention.ts";
import { attentionForwardRef, causalAttentionRef } from "../../src/reference/attention.ts";
import { uniformArray } from "../../src/util/random.ts";
import { assertClose } from "../_assert_close.ts";
import { assertEquals, assertRejects } from "../_asserts.ts";
import { checkGradients, runOps } from "../_harness.ts";
import {
  type AttentionCase,
  attentionCase,
  caseInputs,
  runs,
  scattered,
} from "./_attention_cases.ts";

const FLASH: AttentionKernel[] = ["flash64", "flash32"];

/** The op of `c` with `kernel`, and the forward's packed output (output then lse) it views. */
function withLse(c: AttentionCase, kernel: AttentionKernel) {
  return (q: Tensor, k: Tensor, v: Tensor, ids: Tensor): Tensor[] => {
    const y = causalAttention(q, k, v, ids, { kernel, window: c.window });
    if (y.source.kind !== "op") throw new Error("expected the attention output to be a view");
    return [y, y.source.inputs[0]];
  };
}

const C = attentionCase;
const FORWARD_CASES: AttentionCase[] = [
  C("D=64, H=4 Hkv=4, T=13", [1, 13, 4, 4, 64], [runs([0, 13])]),
  C("D=80, GQA 2, packed and padded, T=37", [2, 37, 4, 2, 80], [
    runs([0, 3], [1, 2], [2, 24], [3, 8]),
    runs([-1, 5], [7, 25], [-1, 7]),
  ]),
  C("D=128, GQA 3, window 16, T=70", [1, 70, 3, 1, 128], [runs([0, 70])], { window: 16 }),
  C("D=256, GQA 2, T=9", [1, 9, 2, 1, 256], [runs([0, 4], [1, 5])]),
  C("D=6, GQA 4, scattered segments, T=130", [1, 130, 4, 1, 6], [scattered(130, 21)]),
  C("D=1, T=1", [1, 1, 1, 1, 1], [[0]]),
  C("D=10, window 1, left padding, T=37", [2, 37, 2, 2, 10], [
    runs([-1, 5], [0, 32]),
    runs([0, 37]),
  ], {
    window: 1,
  }),
  C("D=65, window longer than the sequence, T=21", [1, 21, 2, 1, 65], [runs([0, 21])], {
    window: 70,
  }),
  C("sharp scores (|score| up to ~100), D=10, T=37", [1, 37, 4, 2, 10], [runs([0, 20], [1, 17])], {
    qk: 10,
  }),
];

/** Checks the output and lse of `kernel` on `c` against the f64 reference. */
async function checkForward(c: AttentionCase, kernel: AttentionKernel, seed: number) {
  const inputs = caseInputs(c, seed);
  const [y, packed] = await runOps(inputs, withLse(c, kernel));
  const [q, k, v, ids] = inputs.map((x) => x.data);
  const ref = attentionForwardRef(q, k, v, ids, c.shape, undefined, c.window);
  const label = `${kernel}: ${c.label}`;
  assertClose(y, ref.out, { label: `${label}: output`, atol: 1e-5, rtol: 1e-4 });
  assertClose(packed.subarray(y.length), ref.lse, {
    label: `${label}: lse`,
    atol: 1e-5,
    rtol: 1e-5,
  });
}

Deno.test("flash attention: forward and lse match CPU (odd T, D 1..256, GQA, windows)", async () => {
  for (const kernel of FLASH) {
    for (const [i, c] of FORWARD_CASES.entries()) await checkForward(c, kernel, 1000 + 10 * i);
  }
});

Deno.test("register attention: the forward's lse matches CPU", async () => {
  for (const i of [1, 6]) await checkForward(FORWARD_CASES[i], "register", 1100 + 10 * i);
});

const GRAD_CASES: [AttentionCase, AttentionKernel][] = [
  [
    C("D=6, GQA 2, packed and padded, T=13", [2, 13, 4, 2, 6], [
      runs([0, 5], [1, 8]),
      runs([3, 10], [-1, 3]),
    ]),
    "flash64",
  ],
  [
    C("D=10, GQA 3, window 8, scattered, T=37", [1, 37, 3, 1, 10], [scattered(37, 23)], {
      window: 8,
    }),
    "flash32",
  ],
  [C("D=64, GQA 2, sharp scores, T=9", [1, 9, 2, 1, 64], [runs([0, 9])], { qk: 2 }), "flash64"],
];

Deno.test("flash attention: backward (q, k, v) matches finite differences", async () => {
  for (const [i, [c, kernel]] of GRAD_CASES.entries()) {
    await checkGradients({
      label: `${kernel}: ${c.label}`,
      inputs: caseInputs(c, 1200 + 10 * i),
      build: (q, k, v, ids) => causalAttention(q, k, v, ids, { kernel, window: c.window }),
      reference: (q, k, v, ids) => causalAttentionRef(q, k, v, ids, c.shape, undefined, c.window),
    });
  }
});

/** dq, dk, dv of `sum(attention * R)` on `c` with `kernel` (R fixed by `seed`). */
function gradients(c: AttentionCase, kernel: AttentionKernel, seed: number) {
  return (q: Tensor, k: Tensor, v: Tensor, ids: Tensor): Tensor[] => {
    const y = causalAttention(q, k, v, ids, { kernel, window: c.window });
    return grad(y, [q, k, v], q.graph.constant(uniformArray(y.size, seed), y.shape));
  };
}

Deno.test("flash attention: gradients equal the register kernels' at D 80, 128, 256", async () => {
  const cases: [AttentionCase, AttentionKernel][] = [
    [FORWARD_CASES[1], "flash64"],
    [FORWARD_CASES[3], "flash64"],
    [
      C("D=128, GQA 2, window 5, two workgroups of keys, T=70", [1, 70, 2, 1, 128], [
        runs([0, 40], [1, 30]),
      ], { window: 5 }),
      "flash32",
    ],
  ];
  for (const [i, [c, kernel]] of cases.entries()) {
    const inputs = caseInputs(c, 1300 + 10 * i);
    const expected = await runOps(inputs, gradients(c, "register", 1301 + i));
    const got = await runOps(inputs, gradients(c, kernel, 1301 + i));
    ["dq", "dk", "dv"].forEach((name, j) =>
      assertClose(got[j], expected[j], {
        label: `${kernel}: ${c.label}: ${name}`,
        atol: 2e-5,
        rtol: 1e-4,
      })
    );
  }
});

Deno.test("flash attention: deterministic, padding gets no gradient", async () => {
  const [c, kernel] = GRAD_CASES[0];
  const inputs = caseInputs(c, 1400);
  const first = await runOps(inputs, gradients(c, kernel, 1401));
  const second = await runOps(inputs, gradients(c, kernel, 1401));
  first.forEach((g, i) => assertEquals([...g], [...second[i]], `gradient ${i}`));
  const { seq, kvHeads, headDim } = c.shape;
  // Batch row 1 ends with 3 padding positions.
  const dk = [...first[1]].slice((2 * seq - 3) * kvHeads * headDim);
  assertEquals(dk, new Array(3 * kvHeads * headDim).fill(0), "dk of padding");
});

Deno.test("flash attention: head dims above the kernels' limit are refused by name", async () => {
  const gpu = await getGpu();
  const dims = { batch: 1, seq: 4, heads: 1, kvHeads: 1, headDim: FLASH_MAX_HEAD_DIM + 4 };
  assertEquals(flashMisfit(gpu, dims, 64), "expected a head dim of at most 256, received 260");
  const c = C("D=260", [1, 4, 1, 1, FLASH_MAX_HEAD_DIM + 4], [runs([0, 4])]);
  await assertRejects(
    () => runOps(caseInputs(c, 1500), withLse(c, "flash64")),
    Error,
    'Cannot run "causal_attention" with the flash64 kernels: expected a head dim of at most 256',
  );
});

import { assertEquals } from "../_asserts.ts";
import { modelShape } from "../../bench/_model_shapes.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { formatMemoryReport, memoryReport } from "../../src/trainer/memory_report.ts";

const LORA = { rank: 8, alpha: 16, targetModules: ["all-linear"] };

Deno.test("memory report: Qwen2.5-0.5B's counts as PEFT prints them, bytes per trainable", () => {
  const cfg = parseHfConfig(modelShape("qwen2.5-0.5b"));
  const full = memoryReport(cfg);
  const lora = memoryReport(cfg, { lora: LORA });
  // PEFT's print_trainable_parameters for r=8 on all linear layers:
  // "trainable params: 4,399,104 || all params: 498,431,872".
  assertEquals([lora.trainableParameters, lora.parameters + lora.trainableParameters], [
    4399104,
    498431872,
  ]);
  assertEquals(full.trainableParameters, 494032768);
  assertEquals(full.optimizerBytes, 8 * 494032768);
  assertEquals(full.floorBytes, 16 * 494032768);
  assertEquals(lora.optimizerBytes, 8 * 4399104);
  assertEquals(lora.gradientBytes, 4 * 4399104);
  assertEquals(lora.weightBytes, 4 * 498431872);
  assertEquals([lora.explorerBytes, lora.referenceBytes], [0, 0], "no explorer asked for");
  // The explorer's copy of a LoRA policy is its adapter; the base is shared (and the reference).
  const explored = memoryReport(cfg, { lora: LORA, explorer: "bf16", reference: true });
  assertEquals([explored.explorerBytes, explored.referenceBytes], [4 * 4399104, 0]);
  assertEquals(
    explored.totalBytes,
    lora.weightBytes + lora.gradientBytes + lora.optimizerBytes + explored.explorerBytes,
  );
  assertEquals(
    formatMemoryReport(explored),
    "memory: 494032768 parameters, 4399104 trainable (0.890%); weights 1901.4 MiB, " +
      "gradients 16.8 MiB, optimizer 33.6 MiB, explorer 16.8 MiB, reference 0.0 MiB; " +
      "total 1968.5 MiB (floor 1951.7 MiB; activations not counted)",
  );
});

Deno.test("memory report: half-precision frozen copies and bf16 moments, against the 16-byte floor", () => {
  const cfg = parseHfConfig(modelShape("qwen2.5-0.5b"));
  const full = memoryReport(cfg, { explorer: "bf16", reference: true, frozenDtype: "bf16" });
  // Qwen2.5-0.5B: 493,961,216 matrix and 71,552 vector parameters (norms, q/k/v biases).
  const half = 2 * 493961216 + 4 * 71552;
  assertEquals([full.explorerBytes, full.referenceBytes], [half, half]);
  assertEquals(full.totalBytes - full.floorBytes, 2 * half);
  const moments = memoryReport(cfg, { momentsDtype: "bfloat16" });
  assertEquals(moments.optimizerBytes, 4 * 494032768);
  // LoRA over a bf16 base: the base costs 2 bytes per matrix parameter.
  const lora = memoryReport(cfg, { lora: LORA, frozenDtype: "bf16" });
  assertEquals(lora.weightBytes, half + 4 * 4399104);
  assertEquals(lora.floorBytes, half + 16 * 4399104);
});

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
  assertEquals(lora.optimizerBytes, 8 * 4399104);
  assertEquals(lora.gradientBytes, 4 * 4399104);
  assertEquals(lora.weightBytes, 4 * 498431872);
  // The explorer's copy of a LoRA policy is its adapter; the base is shared.
  assertEquals(lora.copyBytes, 4 * 4399104);
  assertEquals(
    lora.totalBytes,
    lora.weightBytes + lora.gradientBytes + lora.optimizerBytes + lora.copyBytes,
  );
  assertEquals(memoryReport(cfg, { copies: 2 }).copyBytes, 8 * 494032768);
  assertEquals(
    formatMemoryReport(lora),
    "memory: 494032768 parameters, 4399104 trainable (0.890%); weights 1901.4 MiB, " +
      "gradients 16.8 MiB, optimizer 33.6 MiB, model copies 16.8 MiB; total 1968.5 MiB " +
      "(activations not counted)",
  );
});

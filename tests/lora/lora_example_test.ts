/**
 * The LoRA variant of the built-in example (examples/addition/lora.yaml), shortened to a couple
 * of steps per stage: the GRPO stage (given a KL loss) trains only the adapter, its explorer and
 * KL reference share the frozen base instead of loading copies of it, it logs its memory report,
 * saves PEFT adapter files beside the frozen SFT weights, and its checkpoint resumes with the
 * adapter attached and the optimizer state of the adapter.
 */

import { assertEquals } from "../_asserts.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE } from "../../src/model/lora.ts";
import { runConfig } from "../../src/run/run.ts";
import { listCheckpoints, loadCheckpoint } from "../../src/trainer/checkpoint.ts";
import { SafetensorsFile } from "../../src/model/safetensors.ts";
import { TrainStep } from "../../src/trainer/train_step.ts";
import { POLICY_LOSS_FN } from "../../src/algorithm/policy_loss/mod.ts";
import { configure } from "../../src/util/registry.ts";

const CONFIG = new URL("../../examples/addition/lora.yaml", import.meta.url).pathname;

Deno.test("the addition example's LoRA GRPO stage trains and saves only a PEFT adapter", async () => {
  const root = await Deno.makeTempDir();
  const config = await loadConfig(CONFIG, {
    overrides: [
      `checkpoint_root_dir=${root}`,
      "stages[0].buffer.total_steps=3",
      "stages[0].explorer.eval_interval=0",
      "stages[1].buffer.total_steps=2",
      "stages[1].buffer.batch_size=4",
      // A KL loss needs the frozen reference: the adapted policy's own base, not another copy.
      "stages[1].algorithm.kl_loss_fn=k2",
      "monitor.console=false",
      "monitor.tensorboard=false",
    ],
  });
  const lines: string[] = [];
  const { runDir } = await runConfig(config, { log: (line) => lines.push(line) });
  const memory = lines.filter((l) => l.includes("memory: "));
  // SFT trains all 83k parameters; GRPO a rank-8 adapter on the 14 linear layers.
  assertEquals(memory.length, 2, lines.join("\n"));
  assertEquals(memory[0].includes("83200 parameters, 83200 trainable"), true, memory[0]);
  assertEquals(memory[1].includes("83200 parameters, 17408 trainable"), true, memory[1]);
  // One copy besides the trainer's, the explorer's adapter (17408 x 4 bytes): the explorer and
  // the KL reference share the frozen base.
  assertEquals(memory[1].includes("explorer 0.1 MiB, reference 0.0 MiB"), true, memory[1]);
  const [sft] = await listCheckpoints(`${runDir}/sft`);
  const [grpo] = await listCheckpoints(`${runDir}/grpo`);
  assertEquals(grpo.step, 2);
  const adapter = JSON.parse(await Deno.readTextFile(`${grpo.dir}/${ADAPTER_CONFIG_FILE}`));
  assertEquals([adapter.r, adapter.lora_alpha, adapter.target_modules.length], [8, 16, 7]);
  const tensors = (await SafetensorsFile.open(`${grpo.dir}/${ADAPTER_WEIGHTS_FILE}`)).tensors;
  assertEquals(tensors.size, 28);
  // The base is frozen: the GRPO checkpoint's weights are the SFT checkpoint's, byte for byte.
  assertEquals(
    await Deno.readFile(`${grpo.dir}/model.safetensors`),
    await Deno.readFile(`${sft.dir}/model.safetensors`),
  );
  const resumed = await loadCheckpoint(grpo.dir);
  assertEquals(resumed.model.lora?.targets.length, 14);
  const step = new TrainStep(resumed.model, {
    policyLoss: configure(POLICY_LOSS_FN, "ppo"),
    optimizer: { lr: 0.01 },
  });
  step.optimizer.loadState(resumed.optimizerState);
  assertEquals(resumed.optimizerState.moments.size, 28);
  step.destroy();
  resumed.model.destroy();
  await Deno.remove(root, { recursive: true });
});

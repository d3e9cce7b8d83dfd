import { assertEquals } from "../_asserts.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { BASE, loadError, withFixture, writeConfig } from "../config/_fixture.ts";

/** BASE with `model.lora_configs` given as `items` (line 3 is `lora_configs:`). */
const withLora = (items: string) =>
  BASE.replace("  model_path: model\n", `  model_path: model\n  lora_configs:\n${items}`);

Deno.test("model.lora_configs: defaults, Trinity's keys, a scalar target_modules", async () => {
  await withFixture(async (dir) => {
    const yaml = withLora(`    - name: a
      lora_rank: 8
      lora_alpha: 16
      lora_dtype: auto
      base_model_name: base
      target_modules: all-linear
`);
    const [stage] = (await loadConfig(await writeConfig(dir, yaml), { env: {} })).stages;
    assertEquals(stage.model.loraConfigs, [{
      name: "a",
      loraRank: 8,
      loraAlpha: 16,
      loraDropout: 0,
      targetModules: ["all-linear"],
    }]);
    const listed = yaml.replace("target_modules: all-linear", "target_modules: [q_proj, v_proj]");
    const [again] = (await loadConfig(await writeConfig(dir, listed), { env: {} })).stages;
    assertEquals(again.model.loraConfigs[0].targetModules, ["q_proj", "v_proj"]);
    const none = (await loadConfig(await writeConfig(dir, BASE), { env: {} })).stages[0];
    assertEquals(none.model.loraConfigs, []);
  });
});

Deno.test("model.lora_configs: several entries, dropout, Trinity's unsupported values refused", async () => {
  await withFixture(async (dir) => {
    const file = `${dir}/config.yaml`;
    assertEquals(
      await loadError(dir, withLora("    - lora_rank: 8\n    - lora_rank: 4\n")),
      `${file}:3: model.lora_configs: expected a list of at most 1, found a list of 2`,
    );
    assertEquals(
      await loadError(dir, withLora("    - lora_dropout: 0.1\n")),
      `${file}:4: model.lora_configs[0].lora_dropout: expected a number in [0, 0], found 0.1`,
    );
    assertEquals(
      await loadError(dir, withLora("    - lora_dtype: bf16\n")),
      `${file}:4: model.lora_configs[0].lora_dtype: expected one of auto, float32, fp32, found "bf16"`,
    );
  });
});

import { assertEquals } from "../_asserts.ts";
import { CharTokenizer } from "../../src/model/char_tokenizer.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { createModel, loadModel } from "../../src/model/policy.ts";

Deno.test("a loaded model saves its tokenizer even after its source directory is gone", async () => {
  const tokenizer = CharTokenizer.fromText("ab+=0123456789");
  const raw = {
    model_type: "gpt2",
    n_embd: 8,
    n_layer: 1,
    n_head: 2,
    n_positions: 16,
    vocab_size: tokenizer.vocabSize,
    layer_norm_epsilon: 1e-5,
    activation_function: "gelu_new",
  };
  const model = await createModel(raw, initParameters(parseHfConfig(raw), 1), { tokenizer });
  const [first, second] = [await Deno.makeTempDir(), await Deno.makeTempDir()];
  await model.save(first);
  model.destroy();
  const loaded = await loadModel(first);
  await Deno.remove(first, { recursive: true });
  await loaded.save(second);
  loaded.destroy();
  const again = await loadModel(second);
  assertEquals(again.tokenizer?.encode("1+2="), tokenizer.encode("1+2="));
  again.destroy();
  await Deno.remove(second, { recursive: true });
});

import { assertEquals } from "../_asserts.ts";
import { CharTokenizer } from "../../src/model/char_tokenizer.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { createModel, loadModel } from "../../src/model/policy.ts";
import { tinyLlamaConfig } from "../_tiny_llama.ts";

const LAUNCHER = new URL("../../rft", import.meta.url).pathname;

async function rft(args: string[]) {
  const out = await new Deno.Command(LAUNCHER, { args, stdout: "piped", stderr: "piped" }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

Deno.test("rft generate prints greedy continuations of a saved char-level model", async () => {
  const tokenizer = CharTokenizer.fromText("abcdefgh +=0123456789");
  const raw = tinyLlamaConfig(tokenizer.vocabSize, {
    max_position_embeddings: 64,
    eos_token_id: tokenizer.eosId,
  });
  const model = await createModel(raw, initParameters(parseHfConfig(raw), 3, 0.5), { tokenizer });
  const dir = await Deno.makeTempDir();
  await model.save(dir);
  model.destroy();

  const args = [
    "generate",
    "--model",
    dir,
    "--prompt",
    "1+2=",
    "--temperature",
    "0",
    "--max-tokens",
    "6",
  ];
  const result = await rft(args);
  assertEquals(result.code, 0, result.stderr);
  const lines = result.stdout.trim().split("\n");
  assertEquals(/^--- prompt 0 \((stop|length), \d+ tokens\)$/.test(lines[0]), true, lines[0]);
  assertEquals(lines[1].startsWith("1+2="), true, lines[1]);
  // The printed text is the model's greedy continuation.
  const reloaded = await loadModel(dir);
  const [sample] = await reloaded.generate(["1+2="], { temperature: 0, maxTokens: 6 });
  assertEquals(lines[1], "1+2=" + sample.text);
  reloaded.destroy();
  assertEquals((await rft(args)).stdout, result.stdout);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("rft generate without --model or with a missing directory exits 2 with one line", async () => {
  const noModel = await rft(["generate", "--prompt", "x"]);
  assertEquals(noModel.code, 2);
  assertEquals(
    noModel.stderr.startsWith("rft generate: --model DIR is required"),
    true,
    noModel.stderr,
  );
  const missing = await rft(["generate", "--model", "/nonexistent/model", "--prompt", "x"]);
  assertEquals(missing.code, 2);
  assertEquals(
    missing.stderr,
    "rft generate: --model /nonexistent/model: no such file or directory\n",
  );
});

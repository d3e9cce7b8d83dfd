import { assertEquals, assertRejects } from "../_asserts.ts";
import { exportCommand } from "../../src/cli/export.ts";
import { CliError } from "../../src/cli/cli_error.ts";
import { policyOnnx } from "../../src/export/export_onnx.ts";
import { concatBytes } from "../../src/export/onnx_proto.ts";
import { parseHfConfig } from "../../src/model/hf_config.ts";
import { initParameters } from "../../src/model/init.ts";
import { createModel } from "../../src/model/policy.ts";
import { CharTokenizer } from "../../src/model/char_tokenizer.ts";
import { hfCharTokenizerFiles } from "../../src/export/hf_char_tokenizer.ts";

const RAW = {
  model_type: "gpt2",
  n_embd: 8,
  n_layer: 1,
  n_head: 2,
  n_positions: 16,
  vocab_size: 11,
};

/** Saves a model with `params` as checkpoint step_2 of run (or stage) directory `root`. */
async function saveStep2(
  root: string,
  params: Map<string, Float32Array<ArrayBuffer>>,
  tokenizer?: CharTokenizer,
): Promise<void> {
  const model = await createModel(RAW, params, { tokenizer });
  const checkpoint = `${root}/checkpoints/step_2`;
  await model.save(checkpoint);
  await Deno.writeTextFile(
    `${checkpoint}/trainer_state.json`,
    JSON.stringify({ step: 2, optimizer_step: 2 }),
  );
  model.destroy();
}

/** A run directory whose only checkpoint is step_2, holding a model with `params`. */
async function runDirectory(
  params: Map<string, Float32Array<ArrayBuffer>>,
  tokenizer?: CharTokenizer,
): Promise<string> {
  const root = await Deno.makeTempDir();
  await saveStep2(root, params, tokenizer);
  return root;
}

Deno.test("rft export --onnx writes the model of a directory or of a run's latest checkpoint", async () => {
  const params = initParameters(parseHfConfig(RAW), 4, 0.3);
  const root = await runDirectory(params);
  const expected = concatBytes(policyOnnx(parseHfConfig(RAW), params).model);
  try {
    for (const dir of [`${root}/checkpoints/step_2`, root]) {
      const out = `${root}/policy.onnx`;
      assertEquals(await exportCommand(["--onnx", out, "--model", dir]), 0);
      assertEquals(await Deno.readFile(out), expected);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("rft export of a run of two stages takes the checkpoint written last", async () => {
  const root = await Deno.makeTempDir();
  const [first, last] = [1, 2].map((seed) => initParameters(parseHfConfig(RAW), seed, 0.3));
  try {
    await saveStep2(`${root}/sft`, first);
    await saveStep2(`${root}/grpo`, last);
    assertEquals(await exportCommand(["--onnx", `${root}/policy.onnx`, "--model", root]), 0);
    const expected = concatBytes(policyOnnx(parseHfConfig(RAW), last).model);
    assertEquals(await Deno.readFile(`${root}/policy.onnx`), expected);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("rft export --transformers-js writes the KV-cached model, tokenizer and configs of a run", async () => {
  const params = initParameters(parseHfConfig(RAW), 4, 0.3);
  const tokenizer = new CharTokenizer("+0123456="); // 3 special tokens + 8 = 11 ids
  const root = await runDirectory(params, tokenizer);
  const out = `${root}/tjs`;
  try {
    assertEquals(await exportCommand(["--transformers-js", out, "--model", root]), 0);
    const cached = policyOnnx(parseHfConfig(RAW), params, { kvCache: true });
    assertEquals(await Deno.readFile(`${out}/onnx/model.onnx`), concatBytes(cached.model));
    const json = async (name: string) => JSON.parse(await Deno.readTextFile(`${out}/${name}`));
    assertEquals(await json("config.json"), RAW);
    // No ids in config.json: pad from the tokenizer, no eos (rft stops on none either).
    assertEquals(await json("generation_config.json"), { pad_token_id: 0 });
    const hf = hfCharTokenizerFiles(tokenizer);
    assertEquals(await json("tokenizer.json"), hf.tokenizer);
    assertEquals(await json("tokenizer_config.json"), hf.config);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("rft export --transformers-js copies an HF model's tokenizer, chat template and generation config", async () => {
  const root = await Deno.makeTempDir();
  const model = `${root}/checkpoints/step_2`;
  await saveStep2(root, initParameters(parseHfConfig(RAW), 4, 0.3));
  const hf = hfCharTokenizerFiles(new CharTokenizer("+0123456="));
  const sideFiles = {
    "tokenizer.json": JSON.stringify(hf.tokenizer),
    "tokenizer_config.json": JSON.stringify({ ...hf.config, chat_template: undefined }),
    "chat_template.jinja": "{% for m in messages %}{{ m.content }}{% endfor %}",
    "generation_config.json": JSON.stringify({ eos_token_id: 2, temperature: 0.7 }),
  };
  try {
    for (const [name, text] of Object.entries(sideFiles)) {
      await Deno.writeTextFile(`${model}/${name}`, text);
    }
    assertEquals(await exportCommand(["--transformers-js", `${root}/tjs`, "--model", model]), 0);
    for (const [name, text] of Object.entries(sideFiles)) {
      assertEquals(await Deno.readTextFile(`${root}/tjs/${name}`), text, name);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("rft export names what is missing", async () => {
  const empty = await Deno.makeTempDir();
  try {
    await assertRejects(
      () => exportCommand(["--model", empty]),
      CliError,
      "exactly one of --onnx FILE or --transformers-js DIR is required",
    );
    await assertRejects(
      () => exportCommand(["--onnx", `${empty}/x.onnx`, "--model", empty]),
      CliError,
      `--model ${empty}: expected a model directory (config.json), a checkpoint, or a stage or run directory with checkpoints; found none of these`,
    );
  } finally {
    await Deno.remove(empty, { recursive: true });
  }
  const root = await runDirectory(initParameters(parseHfConfig(RAW), 4, 0.3));
  try {
    await assertRejects(
      () => exportCommand(["--transformers-js", `${root}/tjs`, "--model", root]),
      CliError,
      `--model ${root}: expected a tokenizer (tokenizer.json or char_tokenizer.json) in ${root}/checkpoints/step_2, found none`,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

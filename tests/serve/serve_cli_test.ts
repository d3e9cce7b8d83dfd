/**
 * `./rft serve` as a user runs it: a saved tiny model served on a free port, answering
 * /health and a greedy chat completion that equals the model's own greedy continuation, then
 * stopped by SIGINT with exit code 0; a bad flag is a usage error (exit 2).
 */

import { assertEquals } from "../_asserts.ts";
import { loadModel } from "../../src/model/policy.ts";
import { tinyModel, TOKENIZER } from "./_tiny_server.ts";

const LAUNCHER = new URL("../../rft", import.meta.url).pathname;

/** Reads `stream` until a line matches `pattern`; returns the match. */
async function waitForLine(stream: ReadableStream<Uint8Array>, pattern: RegExp) {
  const lines = stream.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (true) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`rft serve ended before printing ${pattern}: ${text}`);
    text += value;
    const match = pattern.exec(text);
    if (match) {
      lines.releaseLock();
      return match;
    }
  }
}

Deno.test("rft serve answers a chat completion and stops on SIGINT", async () => {
  const dir = await Deno.makeTempDir();
  const model = await tinyModel();
  await model.save(dir);
  model.destroy();
  const child = new Deno.Command(LAUNCHER, {
    args: ["serve", "--model", dir, "--port", "0", "--name", "tiny", "--max-prompt-tokens", "20"],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  try {
    const [, url] = await waitForLine(
      child.stderr,
      /serving "tiny" at (http:\/\/127\.0\.0\.1:\d+)\/v1/,
    );
    const health = await fetch(`${url}/health`);
    assertEquals(await health.json(), { status: "ok" });
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({
        model: "tiny",
        messages: [{ role: "user", content: "ab" }],
        temperature: 0,
      }),
    });
    const reply = await response.json();
    const saved = await loadModel(dir);
    const [greedy] = await saved.generate([TOKENIZER.encode("<bos>ab<eos>")], {
      temperature: 0,
      maxTokens: 32 - 20,
    });
    saved.destroy();
    assertEquals(reply.choices[0].message.content, greedy.text);
  } finally {
    child.kill("SIGINT");
    assertEquals((await child.status).code, 0);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("rft serve without --model is a usage error", async () => {
  const out = await new Deno.Command(LAUNCHER, { args: ["serve"], stderr: "piped", stdout: "null" })
    .output();
  assertEquals(out.code, 2);
  assertEquals(new TextDecoder().decode(out.stderr).includes("--model DIR is required"), true);
});

Deno.test("rft serve --tool-call-parser: a plugin's parser is used, an unknown one is exit 2", async () => {
  const dir = await Deno.makeTempDir();
  const model = await tinyModel();
  await model.save(`${dir}/model`);
  model.destroy();
  await Deno.mkdir(`${dir}/plugins`);
  // A parser reading "call NAME" replies, registered by a plugin as any registry entry is.
  await Deno.writeTextFile(
    `${dir}/plugins/call_parser.ts`,
    `import { grammar, TOOL_CALL_PARSERS } from "${new URL("../../mod.ts", import.meta.url).href}";
TOOL_CALL_PARSERS.register("call_word", {
  description: "call NAME",
  recognizes: () => false,
  parse: (text) => {
    const m = /^call (\\w+)$/.exec(text.trim());
    return m ? { content: "", calls: [{ name: m[1], arguments: {} }], malformed: 0 } : { content: text, calls: [], malformed: 0 };
  },
  callsGrammar: (tools) => grammar.seq(grammar.literal("call "), grammar.alt(...tools.map((t) => grammar.literal(t.function.name)))),
});
`,
  );
  const serve = (...args: string[]) =>
    new Deno.Command(LAUNCHER, {
      args: ["serve", "--model", `${dir}/model`, "--port", "0", ...args],
      stdout: "null",
      stderr: "piped",
    });
  try {
    const child = serve("--plugin-dir", `${dir}/plugins`, "--tool-call-parser", "call_word")
      .spawn();
    try {
      const [, url] = await waitForLine(
        child.stderr,
        /serving "model" at (http:\/\/\S+)\/v1 .*tool calls read as call_word/,
      );
      assertEquals(await (await fetch(`${url}/health`)).json(), { status: "ok" });
    } finally {
      child.kill("SIGINT");
      assertEquals((await child.status).code, 0);
    }
    const out = await serve("--tool-call-parser", "hermez").output();
    assertEquals(out.code, 2);
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(
      stderr.includes(
        'Unknown tool call parser "hermez"; known: hermes, llama3_json. Did you mean "hermes"?',
      ),
      true,
      stderr,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

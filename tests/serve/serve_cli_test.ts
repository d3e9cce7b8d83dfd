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

/**
 * Bench and test helper: a nats-server with JetStream of its own (store in a temporary directory, a free
 * port on 127.0.0.1, read from the ports file it writes), stopped and removed on dispose.
 */

/** A running nats-server; `await using` stops it. */
export interface TestNatsServer extends AsyncDisposable {
  url: string;
  /** Kills the server with SIGKILL. */
  kill(): Promise<void>;
  /** Starts it again on the same port and store. */
  restart(): Promise<void>;
}

/** Starts a nats-server (see the file comment). */
export async function startNatsServer(): Promise<TestNatsServer> {
  const dir = await Deno.makeTempDir({ prefix: "rft_nats_" });
  const spawn = (port: string) =>
    new Deno.Command("nats-server", {
      args: ["-js", "-sd", `${dir}/store`, "-a", "127.0.0.1", "-p", port, "--ports_file_dir", dir],
      stdout: "null",
      stderr: "null",
    }).spawn();
  let child = spawn("-1");
  const url = await portsFileUrl(dir);
  const port = new URL(url).port;
  let running = true;
  const kill = async () => {
    if (!running) return;
    child.kill("SIGKILL");
    await child.status;
    running = false;
  };
  return {
    url,
    kill,
    restart: async () => {
      await kill();
      child = spawn(port);
      running = true;
      await portsFileUrl(dir);
    },
    async [Symbol.asyncDispose]() {
      if (running) {
        child.kill("SIGTERM");
        await child.status;
      }
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The URL in the ports file nats-server writes into `dir` (waits for it; removes it). */
async function portsFileUrl(dir: string): Promise<string> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.name.endsWith(".ports")) continue;
      const text = await Deno.readTextFile(`${dir}/${entry.name}`).catch(() => "");
      if (!text) continue;
      await Deno.remove(`${dir}/${entry.name}`);
      return (JSON.parse(text) as { nats: string[] }).nats[0];
    }
  }
  throw new Error("nats-server wrote no ports file within 10 s");
}

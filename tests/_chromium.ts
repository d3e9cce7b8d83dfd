/**
 * Test helper: a page in headless Chromium (`/usr/bin/chromium`, or `$CHROMIUM`), driven over
 * the DevTools protocol: evaluate JavaScript in the page and move the mouse. A fresh profile
 * directory each time, no network services, no sandbox (CI runs as root). Tests only.
 */

const CHROMIUM = Deno.env.get("CHROMIUM") ?? "/usr/bin/chromium";

/** A loaded page. */
export interface ChromiumPage {
  /** The value of `expression` (awaited when it is a promise), as JSON. */
  evaluate<T>(expression: string): Promise<T>;
  /** Moves the mouse to viewport pixel (x, y). */
  mouseMove(x: number, y: number): Promise<void>;
}

/** A DevTools protocol connection: numbered requests, one session. */
class Cdp {
  #next = 1;
  readonly #pending = new Map<number, PromiseWithResolvers<Record<string, unknown>>>();
  sessionId: string | undefined;

  private constructor(readonly socket: WebSocket) {
    socket.onmessage = (event) => {
      const message = JSON.parse(event.data);
      const waiting = this.#pending.get(message.id);
      if (!waiting) return;
      this.#pending.delete(message.id);
      if (message.error) waiting.reject(new Error(JSON.stringify(message.error)));
      else waiting.resolve(message.result);
    };
  }

  static async connect(url: string): Promise<Cdp> {
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = () => reject(new Error(`cannot connect to ${url}`));
    });
    return new Cdp(socket);
  }

  send(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.#next++;
    const waiting = Promise.withResolvers<Record<string, unknown>>();
    this.#pending.set(id, waiting);
    const session = this.sessionId ? { sessionId: this.sessionId } : {};
    this.socket.send(JSON.stringify({ id, method, params, ...session }));
    return waiting.promise;
  }
}

/** Reads stderr until Chromium prints its DevTools address. */
async function devToolsUrl(stderr: ReadableStream<Uint8Array>): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  const reader = stderr.getReader();
  while (true) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`chromium exited before listening:\n${text}`);
    text += decoder.decode(value);
    const url = /DevTools listening on (ws:\/\/\S+)/.exec(text)?.[1];
    if (url) {
      reader.releaseLock();
      stderr.pipeTo(new WritableStream()).catch(() => {}); // keep draining
      return url;
    }
  }
}

/** Opens `url` in headless Chromium, waits for it to load, runs `fn`, then closes all. */
export async function withChromiumPage<T>(
  url: string,
  fn: (page: ChromiumPage) => Promise<T>,
): Promise<T> {
  const profile = await Deno.makeTempDir({ prefix: "rft-chromium-" });
  const child = new Deno.Command(CHROMIUM, {
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      `--user-data-dir=${profile}`,
      "--remote-debugging-port=0",
      "--window-size=1100,900",
      "about:blank",
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let cdp: Cdp | undefined;
  try {
    cdp = await Cdp.connect(await devToolsUrl(child.stderr));
    const { targetId } = await cdp.send("Target.createTarget", { url }) as { targetId: string };
    const attached = await cdp.send("Target.attachToTarget", { targetId, flatten: true });
    cdp.sessionId = attached.sessionId as string;
    const page: ChromiumPage = {
      async evaluate<V>(expression: string) {
        const result = await cdp!.send("Runtime.evaluate", {
          expression,
          returnByValue: true,
          awaitPromise: true,
        }) as { result: { value: V }; exceptionDetails?: unknown };
        if (result.exceptionDetails) {
          throw new Error(`page error: ${JSON.stringify(result.exceptionDetails)}`);
        }
        return result.result.value;
      },
      async mouseMove(x, y) {
        await cdp!.send("Input.dispatchMouseEvent", { type: "mouseMoved", x, y });
      },
    };
    const loaded = `location.href === ${JSON.stringify(url)} && document.readyState === "complete"`;
    for (let i = 0; !(await page.evaluate<boolean>(loaded)); i++) {
      if (i === 300) throw new Error(`chromium did not load ${url} in 30 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return await fn(page);
  } finally {
    cdp?.socket.close();
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
    await child.status;
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  }
}

/**
 * The run's explorer registry in the KV: each explorer process takes the lowest free id
 * (`explorers.<id>`, claimed with the KV's create-if-absent, so two never share one) and rewrites
 * its entry (host, pid, steps, version, time) after each step as its heartbeat. The trainer
 * counts the explorers heard from lately.
 */

import { KV_KEYS, type NatsLink } from "./nats_link.ts";

/** An explorer's registry entry. */
export interface ExplorerBeat {
  host: string;
  pid: number;
  /** Explore steps this process has done. */
  steps: number;
  /** The policy version it samples with. */
  version: number;
  /** Unix time of the beat, in ms. */
  at: number;
}

/** An explorer's entry is alive while its last beat is younger than this, in ms. */
export const ALIVE_MS = 120_000;

/** Registers this process as an explorer; returns its id. */
export async function registerExplorer(link: NatsLink): Promise<number> {
  for (let id = 0;; id++) {
    try {
      await link.kv.create(`${KV_KEYS.explorers}.${id}`, JSON.stringify(beat(0, -1)));
      return id;
    } catch {
      // Taken: an id is never reused, so an entry stays with the process that claimed it.
    }
  }
}

/** Rewrites explorer `id`'s entry. */
export async function heartbeat(
  link: NatsLink,
  id: number,
  steps: number,
  version: number,
): Promise<void> {
  await link.write(`${KV_KEYS.explorers}.${id}`, beat(steps, version));
}

/** Explorers whose last beat is younger than {@link ALIVE_MS}. */
export async function aliveExplorers(link: NatsLink): Promise<number> {
  let alive = 0;
  const keys = await link.kv.keys(`${KV_KEYS.explorers}.*`);
  for await (const key of keys) {
    const entry = await link.read<ExplorerBeat>(key);
    if (entry && Date.now() - entry.at < ALIVE_MS) alive++;
  }
  return alive;
}

function beat(steps: number, version: number): ExplorerBeat {
  return { host: Deno.hostname(), pid: Deno.pid, steps, version, at: Date.now() };
}

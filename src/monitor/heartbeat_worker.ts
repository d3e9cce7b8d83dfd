/**
 * The heartbeat's thread (`heartbeat.ts` starts it): once a second, when the command printed
 * nothing for the quiet limit while an activity is open, it writes the heartbeat line to stderr
 * and records that it did.
 */

import { readActivityBoard } from "../util/activity.ts";
import { noteForeignWrite, quietSeconds } from "../util/status_lines.ts";
import { heartbeatLine, type HeartbeatSetup } from "./heartbeat.ts";

const encoder = new TextEncoder();

self.addEventListener("message", (event) => {
  const setup = (event as MessageEvent<HeartbeatSetup>).data;
  const { status, activity, quietLimit, isTerminal, columns } = setup;
  setInterval(() => {
    if (quietSeconds(status) < quietLimit) return;
    const open = readActivityBoard(activity);
    if (!open) return; // nothing under way: an idle server stays quiet
    let line = heartbeatLine(open, Date.now());
    if (isTerminal && line.length > columns - 1) line = `${line.slice(0, columns - 2)}…`;
    Deno.stderr.writeSync(encoder.encode(isTerminal ? `\r\x1b[K${line}` : `${line}\n`));
    noteForeignWrite(status, isTerminal);
  }, 1000);
});

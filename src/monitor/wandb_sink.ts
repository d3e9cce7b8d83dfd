/**
 * The Weights & Biases monitor, through the `@wandb/sdk` npm package where the user has it and a
 * network reaches wandb.ai (and `WANDB_API_KEY` is set): a W&B run named after the rft run, each
 * row logged at its step with its stage as a key prefix (`grpo/actor/loss`: steps count per
 * stage). Where any of these is missing it is not opened, and `openWandbSink` says why in one
 * line, so the other monitors go on. rft does not depend on the package: it is imported when
 * asked for, by a specifier built at run time.
 */

import type { MetricsRecord, MetricsSink } from "./metrics_sink.ts";

/** What rft uses of `@wandb/sdk`'s default export. */
export interface WandbModule {
  init(options: { project?: string; name?: string; config?: unknown; dir?: string }): Promise<
    unknown
  >;
  log(data: Record<string, unknown>, step?: number): void;
  finish(): Promise<void>;
}

/** What the W&B run is named after. */
export interface WandbRunInfo {
  project: string;
  name: string;
  runDir: string;
  config?: unknown;
}

/** The npm specifier imported (a variable, so no tool fetches it ahead of a run that asks). */
const WANDB_PACKAGE = ["npm:@wandb", "sdk@^0.5"].join("/");

/** Imports `@wandb/sdk` (its default export). */
export async function importWandb(): Promise<WandbModule> {
  const module = await import(WANDB_PACKAGE);
  return (module.default ?? module) as WandbModule;
}

/** How long `wandb.init` may take before W&B counts as unreachable. */
const INIT_TIMEOUT_MS = 30_000;

/** Logs rows to a W&B run. */
class WandbSink implements MetricsSink {
  constructor(private readonly wandb: WandbModule) {}

  log({ step, stage, metrics }: MetricsRecord): void {
    const data = stage
      ? Object.fromEntries(Object.entries(metrics).map(([k, v]) => [`${stage}/${k}`, v]))
      : metrics;
    this.wandb.log(data, step);
  }

  async close(): Promise<void> {
    await this.wandb.finish();
  }
}

/**
 * A W&B sink for the run, or the reason there is none (no `WANDB_API_KEY`, the package cannot be
 * imported, `wandb.init` fails or takes over 30 s).
 */
export async function openWandbSink(
  run: WandbRunInfo,
  importer: () => Promise<WandbModule> = importWandb,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): Promise<{ sink: MetricsSink } | { unavailable: string }> {
  if (!env("WANDB_API_KEY") && env("WANDB_MODE") !== "offline") {
    return { unavailable: "WANDB_API_KEY is not set" };
  }
  let wandb: WandbModule;
  try {
    wandb = await importer();
  } catch (err) {
    return { unavailable: `cannot import @wandb/sdk (${firstLine(err)})` };
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("no answer in 30 s")), INIT_TIMEOUT_MS);
  });
  try {
    await Promise.race([
      wandb.init({ project: run.project, name: run.name, config: run.config, dir: run.runDir }),
      timeout,
    ]);
  } catch (err) {
    return { unavailable: `wandb.init failed (${firstLine(err)})` };
  } finally {
    clearTimeout(timer);
  }
  return { sink: new WandbSink(wandb) };
}

function firstLine(err: unknown): string {
  return ((err as Error)?.message ?? String(err)).split("\n")[0];
}

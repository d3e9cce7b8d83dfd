/**
 * Sample strategies (Trinity's `SAMPLE_STRATEGY`): how the trainer draws one training batch from
 * the experience buffer, and from an expert (SFT) buffer for `mix`. `default` takes in buffer
 * order, `staleness_control` skips experiences too old for the trainer's policy version, `mix`
 * fills a share of each batch with expert data flagged for the `mix` policy and entropy losses.
 */

import type { Experience } from "../buffer/experience.ts";
import type { ExperienceBuffer } from "../buffer/experience_buffer.ts";
import { type Args, configure, type Configured, Registry } from "../util/registry.ts";

/** The buffers a strategy draws from. */
export interface SampleBuffers {
  /** Rollouts from the explorer. */
  experience: ExperienceBuffer;
  /** Expert (SFT) experiences; `mix` needs it, the others ignore it. */
  expert?: ExperienceBuffer;
}

/** Options of one {@link SampleStrategy.sample} call. */
export interface SampleOptions {
  /** The trainer's current policy version, against which staleness is measured. */
  policyVersion: number;
  /** Aborts a draw still waiting for experiences. */
  signal?: AbortSignal;
}

/** One training batch. */
export interface SampleResult {
  /** The batch; fewer than asked only once a buffer is closed and drained. */
  experiences: Experience[];
  /** Per experience, whether it is expert data (the `isExpert` input of the `mix` losses). */
  isExpert: boolean[];
  /** Scalars for logging, keyed `sample/...`. */
  metrics: Record<string, number>;
}

/** A sample strategy. */
export interface SampleStrategy {
  /** Every argument it takes (`sample_strategy_args`), with its default. */
  readonly defaultArgs: Args;
  /** Throws when `args` are out of range or `buffers` lack one the strategy needs. */
  check(args: Args, buffers: SampleBuffers): void;
  /**
   * Draws `batchSize` experiences. Waits until enough are available; once a buffer is closed,
   * resolves with what is left. Rejects with the signal's reason when it aborts.
   */
  sample(
    buffers: SampleBuffers,
    batchSize: number,
    args: Args,
    options: SampleOptions,
  ): Promise<SampleResult>;
}

/** `sample/count` and `sample/staleness_mean` (trainer version minus each policy version). */
function batchMetrics(exps: readonly Experience[], policyVersion: number): Record<string, number> {
  const staleness = exps.reduce((sum, exp) => sum + policyVersion - exp.info.policyVersion, 0);
  return { "sample/count": exps.length, "sample/staleness_mean": staleness / (exps.length || 1) };
}

/** Throws unless the numeric argument `key` lies in [`low`, `high`]. */
function checkRange(strategy: string, args: Args, key: string, low: number, high: number): void {
  const value = args[key];
  if (typeof value !== "number" || !(value >= low && value <= high)) {
    throw new Error(
      `Cannot configure sample strategy "${strategy}": key "${key}" expected a number in ` +
        `[${low}, ${high}], received ${JSON.stringify(value)}`,
    );
  }
}

/** Throws unless `max_staleness` is a number >= 0. */
function checkStalenessArgs(args: Args): void {
  checkRange("staleness_control", args, "max_staleness", 0, Infinity);
}

/** Throws unless `expert_data_ratio` is in [0, 1] and there is an expert buffer. */
function checkMixArgs(args: Args, buffers: SampleBuffers): void {
  checkRange("mix", args, "expert_data_ratio", 0, 1);
  if (!buffers.expert) {
    throw new Error(
      'Cannot use sample strategy "mix": expected an expert buffer (the SFT data to mix in), ' +
        "found none",
    );
  }
}

/** Takes `n` from `buffer`; none when `n` is 0 (a buffer's `take` wants at least one). */
function takeUpTo(buffer: ExperienceBuffer, n: number, signal?: AbortSignal) {
  return n > 0 ? buffer.take(n, { signal }) : Promise.resolve([]);
}

/** Takes `batchSize` experiences from the experience buffer, in the buffer's order. */
export const defaultSampleStrategy: SampleStrategy = {
  defaultArgs: {},
  check() {},
  async sample(buffers, batchSize, _args, { policyVersion, signal }) {
    const experiences = await buffers.experience.take(batchSize, { signal });
    return {
      experiences,
      isExpert: experiences.map(() => false),
      metrics: batchMetrics(experiences, policyVersion),
    };
  },
};

/**
 * Like `default`, but drops the experiences whose policy version is below the trainer's minus
 * `max_staleness` and takes more in their place; `sample/dropped_stale` counts them. Unlike the
 * buffer's own `maxStaleness`, measures against the version the trainer passes.
 */
export const stalenessControlSampleStrategy: SampleStrategy = {
  defaultArgs: { max_staleness: 1 },
  check: checkStalenessArgs,
  async sample(buffers, batchSize, args, { policyVersion, signal }) {
    checkStalenessArgs(args);
    const oldest = policyVersion - (args.max_staleness as number);
    const experiences: Experience[] = [];
    let dropped = 0;
    while (experiences.length < batchSize) {
      const taken = await buffers.experience.take(batchSize - experiences.length, { signal });
      if (taken.length === 0) break;
      for (const exp of taken) {
        if (exp.info.policyVersion < oldest) dropped++;
        else experiences.push(exp);
      }
    }
    return {
      experiences,
      isExpert: experiences.map(() => false),
      metrics: { ...batchMetrics(experiences, policyVersion), "sample/dropped_stale": dropped },
    };
  },
};

/**
 * Trinity's `mix`: `ceil(expert_data_ratio * batchSize)` experiences from the expert buffer,
 * the rest from the experience buffer; the batch holds the rollouts first, then the expert ones.
 * Both buffers are drawn from at once, each delivering at most once: when the signal aborts after
 * one draw resolved, that draw's experiences are lost.
 */
export const mixSampleStrategy: SampleStrategy = {
  defaultArgs: { expert_data_ratio: 0.5, sft_dataset_name: "sft_dataset" },
  check: checkMixArgs,
  async sample(buffers, batchSize, args, { policyVersion, signal }) {
    checkMixArgs(args, buffers);
    // Trinity rounds up; the epsilon keeps float noise (0.1 * 30 = 3.0000000000000004) from
    // adding one.
    const expertCount = Math.ceil((args.expert_data_ratio as number) * batchSize - 1e-9);
    const [rollouts, expert] = await Promise.all([
      takeUpTo(buffers.experience, batchSize - expertCount, signal),
      takeUpTo(buffers.expert!, expertCount, signal),
    ]);
    const experiences = [...rollouts, ...expert];
    return {
      experiences,
      isExpert: experiences.map((_, i) => i >= rollouts.length),
      metrics: {
        ...batchMetrics(experiences, policyVersion),
        "sample/expert_count": expert.length,
        "sample/rl_count": rollouts.length,
      },
    };
  },
};

/**
 * Sample strategies by name: `default`, `mix`, `staleness_control`, and `warmup` (Trinity's
 * deprecated name of `default`); plugins add theirs with `SAMPLE_STRATEGY.register(name,
 * strategy)`.
 */
export const SAMPLE_STRATEGY: Registry<SampleStrategy> = new Registry<SampleStrategy>(
  "sample strategy",
  [
    ["default", defaultSampleStrategy],
    ["staleness_control", stalenessControlSampleStrategy],
    ["mix", mixSampleStrategy],
    ["warmup", defaultSampleStrategy],
  ],
);

/**
 * Looks up strategy `name`, resolves `given` (`sample_strategy_args`) over its defaults and
 * checks them against `buffers`, so that a bad config fails before the first batch.
 */
export function configureSampleStrategy(
  name: string,
  given: Readonly<Record<string, unknown>>,
  buffers: SampleBuffers,
): Configured<SampleStrategy> {
  const configured = configure(SAMPLE_STRATEGY, name, given);
  configured.entry.check(configured.args, buffers);
  return configured;
}

/**
 * Auxiliary models (`explorer.auxiliary_models`, Trinity's `auxiliary_models`): models that
 * workflows and reward fns use but the run does not train. A Hugging Face model directory runs
 * on rft's own engine as a {@link PolicyRolloutModel} (its weights never change: policy version
 * 0); an ONNX file runs on onnxruntime-web as an {@link OnnxModel}. Looked up by name; a wrong
 * name or kind is an error listing what is configured.
 */

import type { GpuContext } from "../gpu/device.ts";
import { loadModel, type PolicyModel } from "../model/policy.ts";
import { PolicyRolloutModel } from "../workflow/policy_rollout_model.ts";
import { OnnxModel } from "./onnx_model.ts";

/** A generative auxiliary model: its rollout model and the policy model under it. */
interface Generator {
  kind: "generator";
  rollout: PolicyRolloutModel;
  model: PolicyModel;
}

type Entry = Generator | { kind: "onnx"; onnx: OnnxModel };

/** One auxiliary model as `explorer.auxiliary_models` lists it: exactly one of the two paths. */
export interface AuxiliaryModelSpec {
  /** Name workflows and reward fns look it up by. */
  name: string;
  /** HF model directory, run on rft's engine. */
  modelPath?: string;
  /** ONNX file, run on onnxruntime-web. */
  onnxPath?: string;
  /** HF model: longer prompts are cut from the left. Default 512. */
  maxPromptTokens: number;
  /** HF model: most tokens per response. Default 128. */
  maxResponseTokens: number;
  /** HF model: sampling temperature of calls that give none. Default 1. */
  temperature: number;
}

/** The auxiliary models of a run, by name. */
export class AuxiliaryModels {
  readonly #entries: ReadonlyMap<string, Entry>;

  /** A set of already opened models (see {@link AuxiliaryModels.open}). */
  constructor(entries: ReadonlyMap<string, Entry> = new Map()) {
    this.#entries = entries;
  }

  /**
   * Opens every model of `sections` (exactly one of `modelPath`, `onnxPath` each; names
   * distinct). Throws naming the model on a bad section or a model that fails to load, after
   * freeing those already open.
   */
  static async open(
    sections: readonly AuxiliaryModelSpec[],
    gpu: GpuContext,
    seed: number,
  ): Promise<AuxiliaryModels> {
    const entries = new Map<string, Entry>();
    const opened = new AuxiliaryModels(entries);
    try {
      for (const [i, section] of sections.entries()) {
        const fail = (detail: string): never => {
          throw new Error(`Cannot open auxiliary model "${section.name}": ${detail}`);
        };
        if (entries.has(section.name)) fail("another auxiliary model has this name");
        if ((section.modelPath === undefined) === (section.onnxPath === undefined)) {
          fail("expected exactly one of model_path and onnx_path");
        }
        const entry: Promise<Entry> = section.onnxPath !== undefined
          ? OnnxModel.load(section.onnxPath).then((onnx) => ({ kind: "onnx", onnx }))
          : openGenerator(section, gpu, seed + 104729 * (i + 1));
        entries.set(section.name, await entry.catch((err) => fail((err as Error).message)));
      }
    } catch (err) {
      await opened.close();
      throw err;
    }
    return opened;
  }

  /** Names of the configured models, in config order. */
  names(): string[] {
    return [...this.#entries.keys()];
  }

  /** The generative (HF) models with their names, e.g. to serve them over the API. */
  generators(): [string, PolicyRolloutModel][] {
    return [...this.#entries].flatMap(([name, e]) =>
      e.kind === "generator" ? [[name, e.rollout] as [string, PolicyRolloutModel]] : []
    );
  }

  /**
   * The HF model `name` as a rollout model (`generate`, `chat`).
   *
   * @example
   * ```ts
   * declare const auxiliaryModels: AuxiliaryModels, content: string;
   * const [judgement] = await auxiliaryModels.generator("judge").chat([{ role: "user", content }]);
   * ```
   */
  generator(name: string): PolicyRolloutModel {
    const entry = this.#get(name, "generator");
    return (entry as Generator).rollout;
  }

  /**
   * The ONNX model `name` (`score(rows)`, `run(inputs)`).
   *
   * @example
   * ```ts
   * declare const auxiliaryModels: AuxiliaryModels, response: string;
   * const [score] = await auxiliaryModels.onnx("scorer").score([[response.length, 1]]);
   * ```
   */
  onnx(name: string): OnnxModel {
    const entry = this.#get(name, "onnx");
    return (entry as { onnx: OnnxModel }).onnx;
  }

  /** Frees every model. */
  async close(): Promise<void> {
    for (const entry of this.#entries.values()) {
      if (entry.kind === "onnx") await entry.onnx.release();
      else {
        entry.rollout.destroy();
        entry.model.destroy();
      }
    }
  }

  /** {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #get(name: string, kind: Entry["kind"]): Entry {
    const entry = this.#entries.get(name);
    const known = this.names().join(", ") || "none";
    if (!entry) {
      throw new Error(
        `Cannot find auxiliary model "${name}": configured (explorer.auxiliary_models): ${known}`,
      );
    }
    if (entry.kind !== kind) {
      const other = entry.kind === "onnx" ? "onnx" : "generator";
      throw new Error(
        `Cannot use auxiliary model "${name}" as ${
          kind === "onnx" ? "an ONNX model" : "a generator"
        }: it is ${
          entry.kind === "onnx" ? "an ONNX model" : "a Hugging Face model"
        }; use ${other}("${name}")`,
      );
    }
    return entry;
  }
}

/** Loads the HF model of `section` with its limits and sampling defaults. */
async function openGenerator(
  section: AuxiliaryModelSpec,
  gpu: GpuContext,
  seed: number,
): Promise<Generator> {
  const model = await loadModel(section.modelPath!, { gpu });
  try {
    const rollout = new PolicyRolloutModel(model, {
      maxPromptTokens: section.maxPromptTokens,
      maxResponseTokens: section.maxResponseTokens,
      defaults: { temperature: section.temperature, topP: 1, topK: 0 },
      seed,
    });
    return { kind: "generator", rollout, model };
  } catch (err) {
    model.destroy();
    throw err;
  }
}

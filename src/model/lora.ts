/**
 * LoRA adapters in PEFT's format: which linear modules of a model take an adapter (PEFT's leaf
 * module names, read off the description's weight names: Llama q/k/v/o_proj, gate/up/down_proj;
 * GPT-2 c_attn, c_proj, c_fc; `all-linear` is all of them, never the LM head), their seeded
 * initialisation as PEFT does it
 * (A kaiming-uniform, B zero: the adapted model starts equal to the base), and the adapter
 * directory (`adapter_config.json` + `adapter_model.safetensors`, tensors named
 * `base_model.model.<module>.lora_A.weight` [r, in] and `.lora_B.weight` [out, r]).
 */

import type { GpuContext } from "../gpu/device.ts";
import { formatShape, sameShape, type Variable } from "../graph/tensor.ts";
import { InputError } from "../util/input_error.ts";
import { uniformArray } from "../util/random.ts";
import { writeAtomic } from "../util/write_atomic.ts";
import type { ModelConfig } from "./model_config.ts";
import { linearModules } from "./parameters.ts";
import { SafetensorsFile, writeSafetensors } from "./safetensors.ts";
import { uploadTensor } from "./upload.ts";

/** PEFT's adapter config file. */
export const ADAPTER_CONFIG_FILE = "adapter_config.json";
/** PEFT's adapter weights file. */
export const ADAPTER_WEIGHTS_FILE = "adapter_model.safetensors";
/** `target_modules` value meaning every linear module but the LM head. */
export const ALL_LINEAR = "all-linear";

/** The leaf names (PEFT's target_modules) of a model's linear modules, in layer order. */
export function linearModuleNames(cfg: ModelConfig): string[] {
  return [...new Set(linearModules(cfg).map((m) => leafName(m.module)))];
}

/** The last component of a module name (`model.layers.0.self_attn.q_proj` -> `q_proj`). */
function leafName(module: string): string {
  return module.slice(module.lastIndexOf(".") + 1);
}

/** What an adapter is: rank, alpha and the module names it adapts. */
export interface LoraSettings {
  rank: number;
  alpha: number;
  /** Leaf module names (`q_proj`, `c_attn`), or [`all-linear`]. */
  targetModules: readonly string[];
}

/** One adapted module: its HF name (without `.weight`) and the shapes of its product. */
export interface LoraTarget {
  module: string;
  inDim: number;
  outDim: number;
  /** GPT-2's Conv1D, whose weight is stored [in, out] (PEFT's fan_in_fan_out). */
  conv1d: boolean;
}

/** PEFT's name of the A (`"A"`) or B (`"B"`) matrix of `module`. */
export function loraTensorName(module: string, which: "A" | "B"): string {
  return `base_model.model.${module}.lora_${which}.weight`;
}

/**
 * The modules of a model with config `cfg` that `targetModules` names, in parameter order.
 * Throws an InputError (after `where`, when given) for a name that is no linear module of the
 * family.
 */
export function loraTargets(
  cfg: ModelConfig,
  targetModules: readonly string[],
  where?: string,
): LoraTarget[] {
  const known = linearModuleNames(cfg);
  const unknown = targetModules.find((m) => m !== ALL_LINEAR && !known.includes(m));
  if (unknown !== undefined || targetModules.length === 0) {
    throw new InputError(
      `${
        where ? `${where}: ` : ""
      }expected ${ALL_LINEAR} or names of ${cfg.modelType}'s linear modules (${
        known.join(", ")
      }), found ${unknown === undefined ? "none" : JSON.stringify(unknown)}`,
    );
  }
  const wanted = targetModules.includes(ALL_LINEAR) ? known : targetModules;
  return linearModules(cfg)
    .filter((m) => wanted.includes(leafName(m.module)))
    .map(({ module, inDim, outDim }) => ({ module, inDim, outDim, conv1d: cfg.names.conv1d }));
}

/** Host values of a fresh adapter: A kaiming-uniform (PEFT's bound 1/sqrt(in)), B zero. */
export function initLoraParameters(
  targets: readonly LoraTarget[],
  rank: number,
  seed: number,
): Map<string, Float32Array<ArrayBuffer>> {
  const params = new Map<string, Float32Array<ArrayBuffer>>();
  targets.forEach((t, i) => {
    // torch's kaiming_uniform_(a=sqrt(5)) over fan_in = in: bound sqrt(6 / (6 in)) = 1/sqrt(in).
    const bound = 1 / Math.sqrt(t.inDim);
    params.set(
      loraTensorName(t.module, "A"),
      uniformArray(rank * t.inDim, seed + i, -bound, bound),
    );
    params.set(loraTensorName(t.module, "B"), new Float32Array(t.outDim * rank));
  });
  return params;
}

/** The two matrices of `target`'s adapter of rank `rank`: A [r, in] and B [out, r]. */
export function loraShapes(target: LoraTarget, rank: number): ["A" | "B", number[]][] {
  return [["A", [rank, target.inDim]], ["B", [target.outDim, rank]]];
}

/** A LoRA adapter on the GPU: its settings, its modules and their A and B variables. */
export class LoraAdapter {
  constructor(
    readonly settings: LoraSettings,
    readonly targets: readonly LoraTarget[],
    /** A and B of every target, by PEFT name. */
    readonly params: ReadonlyMap<string, Variable>,
  ) {}

  /** The factor of the update: alpha / r. */
  get scale(): number {
    return this.settings.alpha / this.settings.rank;
  }

  /** A and B of `module`, or undefined when it has no adapter. */
  of(module: string): { a: Variable; b: Variable } | undefined {
    const a = this.params.get(loraTensorName(module, "A"));
    return a && { a, b: this.params.get(loraTensorName(module, "B"))! };
  }

  /** Every adapter variable (A then B of each target, in target order). */
  variables(): Variable[] {
    return this.targets.flatMap((t) => [
      this.params.get(loraTensorName(t.module, "A"))!,
      this.params.get(loraTensorName(t.module, "B"))!,
    ]);
  }

  /** Frees the adapter's GPU buffers. */
  destroy(): void {
    for (const v of this.params.values()) v.buffer.destroy();
  }
}

/** Uploads host adapter values (by PEFT name, every target's A and B) as a {@link LoraAdapter}. */
export async function createLoraAdapter(
  gpu: GpuContext,
  cfg: ModelConfig,
  settings: LoraSettings,
  values: ReadonlyMap<string, Float32Array<ArrayBuffer>>,
): Promise<LoraAdapter> {
  const targets = loraTargets(cfg, settings.targetModules);
  const params = new Map<string, Variable>();
  for (const t of targets) {
    for (const [which, shape] of loraShapes(t, settings.rank)) {
      const name = loraTensorName(t.module, which);
      const data = values.get(name)!;
      const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      params.set(name, await uploadTensor(gpu, { name, dtype: "F32", shape, bytes }));
    }
  }
  return new LoraAdapter(settings, targets, params);
}

/**
 * Reads the PEFT adapter in `dir` for a model with config `cfg`: `adapter_config.json` (r,
 * lora_alpha, target_modules; rsLoRA and DoRA are refused) and every target's A and B from
 * `adapter_model.safetensors` (F32, F16 or BF16), checked against the model's shapes.
 */
export async function loadLoraAdapter(
  gpu: GpuContext,
  cfg: ModelConfig,
  dir: string,
): Promise<LoraAdapter> {
  const configPath = `${dir}/${ADAPTER_CONFIG_FILE}`;
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(await Deno.readTextFile(configPath));
  } catch (err) {
    throw new InputError(`Cannot load adapter ${configPath}: ${(err as Error).message}`);
  }
  const bad = (key: string, expected: string) =>
    new InputError(
      `Cannot load adapter ${configPath}: "${key}": expected ${expected}, found ${
        JSON.stringify(raw[key])
      }`,
    );
  if (raw.peft_type !== undefined && raw.peft_type !== "LORA") throw bad("peft_type", '"LORA"');
  if (!Number.isSafeInteger(raw.r) || (raw.r as number) < 1) throw bad("r", "an integer >= 1");
  if (typeof raw.lora_alpha !== "number" || !(raw.lora_alpha > 0)) {
    throw bad("lora_alpha", "a number > 0");
  }
  if (raw.use_rslora === true) throw bad("use_rslora", "false");
  if (raw.use_dora === true) throw bad("use_dora", "false");
  const modules = typeof raw.target_modules === "string"
    ? [raw.target_modules]
    : Array.isArray(raw.target_modules)
    ? raw.target_modules.map(String)
    : undefined;
  if (!modules) throw bad("target_modules", "a string or a list of module names");
  const settings: LoraSettings = {
    rank: raw.r as number,
    alpha: raw.lora_alpha,
    targetModules: modules,
  };
  const targets = loraTargets(cfg, modules, `${configPath}: "target_modules"`);
  const file = await SafetensorsFile.open(`${dir}/${ADAPTER_WEIGHTS_FILE}`);
  const params = new Map<string, Variable>();
  try {
    for (const t of targets) {
      for (const [which, shape] of loraShapes(t, settings.rank)) {
        const name = loraTensorName(t.module, which);
        const info = file.tensors.get(name);
        if (!info || !sameShape(info.shape, shape)) {
          throw new InputError(
            `Cannot load adapter ${file.path}: expected tensor "${name}" of shape ${
              formatShape(shape)
            }, found ${info ? formatShape(info.shape) : "none"}`,
          );
        }
        params.set(
          name,
          await uploadTensor(gpu, { name, dtype: info.dtype, shape, bytes: await file.read(name) }),
        );
      }
    }
  } catch (err) {
    for (const v of params.values()) v.buffer.destroy();
    throw err;
  }
  return new LoraAdapter(settings, targets, params);
}

/**
 * Writes `adapter` (host values by PEFT name) as a PEFT adapter directory: adapter_config.json
 * (target_modules resolved to module names) and adapter_model.safetensors (F32).
 */
export async function saveLoraAdapter(
  dir: string,
  adapter: LoraAdapter,
  values: ReadonlyMap<string, Float32Array>,
  baseModel = "",
): Promise<void> {
  const { rank, alpha } = adapter.settings;
  const modules = [...new Set(adapter.targets.map((t) => leafName(t.module)))];
  const config = {
    peft_type: "LORA",
    task_type: "CAUSAL_LM",
    base_model_name_or_path: baseModel,
    r: rank,
    lora_alpha: alpha,
    lora_dropout: 0,
    target_modules: modules,
    bias: "none",
    fan_in_fan_out: adapter.targets.some((t) => t.conv1d),
    init_lora_weights: true,
    inference_mode: true,
    modules_to_save: null,
    use_rslora: false,
    use_dora: false,
  };
  await Deno.mkdir(dir, { recursive: true });
  await writeSafetensors(
    `${dir}/${ADAPTER_WEIGHTS_FILE}`,
    adapter.variables().map((v) => ({ name: v.name, shape: v.shape, data: values.get(v.name)! })),
  );
  await writeAtomic(`${dir}/${ADAPTER_CONFIG_FILE}`, JSON.stringify(config, null, 2) + "\n");
}

/**
 * transformers.js (`model.generate`, on onnxruntime-node's CPU EP under Deno) generating from a
 * random policy exported with its KV cache into a temporary model directory (config.json and
 * onnx/model.onnx; token ids in and out, so no tokenizer). The eos ids are left out of the
 * config so every row runs its full length, like rft's bench loop. Bench-only: rft itself never
 * depends on transformers.js.
 */

import { AutoModelForCausalLM, env, type PreTrainedModel, Tensor } from "@huggingface/transformers";
import { policyOnnx } from "../src/export/export_onnx.ts";
import { TRANSFORMERS_JS_MODEL } from "../src/export/export_transformers_js.ts";
import { concatBytes } from "../src/export/onnx_proto.ts";
import type { ModelConfig } from "../src/model/hf_config.ts";

/** One exported model loaded in transformers.js. */
export class TransformersJsPolicy {
  private constructor(readonly model: PreTrainedModel, readonly dir: string) {}

  /** Writes the model directory of `raw` with `params` and loads it (offline). */
  static async create(
    raw: Record<string, unknown>,
    cfg: ModelConfig,
    params: ReadonlyMap<string, Float32Array>,
  ): Promise<TransformersJsPolicy> {
    const root = await Deno.makeTempDir();
    const dir = `${root}/model`;
    await Deno.mkdir(`${dir}/onnx`, { recursive: true });
    const { eos_token_id: _, ...config } = raw;
    await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify(config));
    const bytes = concatBytes(policyOnnx(cfg, params, { kvCache: true }).model);
    await Deno.writeFile(`${dir}/${TRANSFORMERS_JS_MODEL}`, bytes);
    env.allowRemoteModels = false;
    env.localModelPath = `${root}/`;
    const model = await AutoModelForCausalLM.from_pretrained("model", { dtype: "fp32" });
    return new TransformersJsPolicy(model, root);
  }

  /** Greedy `count` tokens per prompt (equal lengths): milliseconds and the new tokens. */
  async greedy(prompts: readonly (readonly number[])[], count: number) {
    const dims = [prompts.length, prompts[0].length];
    const ids = BigInt64Array.from(prompts.flat(), (id) => BigInt(id));
    const start = performance.now();
    const out = await this.model.generate({
      input_ids: new Tensor("int64", ids, dims),
      attention_mask: new Tensor("int64", new BigInt64Array(ids.length).fill(1n), dims),
      max_new_tokens: count,
      do_sample: false,
    }) as Tensor;
    const ms = performance.now() - start;
    const rows = out.tolist() as bigint[][];
    return { ms, tokens: rows.map((row) => row.slice(dims[1]).map(Number)) };
  }

  /** Frees the session and removes the model directory. */
  async release(): Promise<void> {
    await this.model.dispose();
    await Deno.remove(this.dir, { recursive: true });
  }
}

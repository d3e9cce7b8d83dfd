/**
 * transformers.js (`npm:@huggingface/transformers`, on onnxruntime-node under Deno) set up for
 * the export tests: offline, models read from absolute directories, errors only. Tests only:
 * rft itself never imports transformers.js or onnxruntime-node.
 */

import { basename, dirname } from "node:path";
import * as transformers from "@huggingface/transformers";
import * as ortNode from "onnxruntime-node";

transformers.env.allowRemoteModels = false;
transformers.env.allowLocalModels = true;

export { ortNode, transformers };

/** The model id of directory `dir` (`env.localModelPath` becomes its parent directory). */
export function localModelId(dir: string): string {
  transformers.env.localModelPath = `${dirname(dir)}/`;
  return basename(dir);
}

/** An int64 onnxruntime-node tensor of `values` [rows, values.length / rows]. */
export function int64NodeTensor(values: readonly number[], rows: number): ortNode.Tensor {
  const data = BigInt64Array.from(values, (v) => BigInt(v));
  return new ortNode.Tensor("int64", data, [rows, values.length / rows]);
}

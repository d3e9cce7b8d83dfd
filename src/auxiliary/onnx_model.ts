/**
 * An ONNX model run by onnxruntime-web on its single-threaded wasm backend (CPU), for auxiliary
 * models such as a reward or classifier model exported to ONNX: float32 tensors in, float32
 * tensors out, plus `score` for the common one-input, one-output scorer. Runs are serialized
 * (one session, one thread). Not trained, and never on rft's WebGPU device.
 */

import type * as Ort from "onnxruntime-web";
import { Mutex } from "../util/mutex.ts";

/** A float32 tensor: row-major values and their shape. */
export interface FloatTensor {
  data: Float32Array;
  dims: readonly number[];
}

/** Where ORT finds its wasm files: the npm package's dist/ in the project's node_modules. */
const WASM_DIR = new URL("../../node_modules/onnxruntime-web/dist/", import.meta.url).href;

/** An ONNX model loaded into an onnxruntime-web session. */
export class OnnxModel {
  readonly #lock = new Mutex();

  private constructor(
    readonly path: string,
    readonly session: Ort.InferenceSession,
    readonly ort: typeof Ort,
  ) {}

  /** Loads the ONNX file `path` (or its bytes, with `path` naming them in errors). */
  static async load(path: string, bytes?: Uint8Array): Promise<OnnxModel> {
    // Imported on first use: runs without ONNX models never load onnxruntime-web.
    const ort = await import("onnxruntime-web");
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.wasmPaths = WASM_DIR;
    ort.env.logLevel = "error";
    try {
      const model = bytes ?? await Deno.readFile(path);
      const session = await ort.InferenceSession.create(model, { executionProviders: ["wasm"] });
      return new OnnxModel(path, session, ort);
    } catch (err) {
      throw new Error(`Cannot load ONNX model ${path}: ${(err as Error).message}`);
    }
  }

  /** The graph's input names. */
  get inputNames(): readonly string[] {
    return this.session.inputNames;
  }

  /** The graph's output names. */
  get outputNames(): readonly string[] {
    return this.session.outputNames;
  }

  /**
   * Runs the graph on `inputs` (by input name); returns every output by name. Throws naming the
   * model on a missing input, a wrong shape or an output that is not float32.
   *
   * @example
   * ```ts
   * const model = await OnnxModel.load("scorer.onnx");
   * const { score } = await model.run({ features: { data: new Float32Array([1, 2]), dims: [1, 2] } });
   * ```
   */
  async run(inputs: Readonly<Record<string, FloatTensor>>): Promise<Record<string, FloatTensor>> {
    const feeds = Object.fromEntries(
      Object.entries(inputs).map((
        [name, t],
      ) => [name, new this.ort.Tensor("float32", Float32Array.from(t.data), [...t.dims])]),
    );
    let outputs: Ort.InferenceSession.OnnxValueMapType;
    try {
      outputs = await this.#lock.run(() => this.session.run(feeds));
    } catch (err) {
      throw new Error(`Cannot run ONNX model ${this.path}: ${(err as Error).message}`);
    }
    return Object.fromEntries(
      Object.entries(outputs).map(([name, value]) => {
        const tensor = value as Ort.Tensor;
        if (tensor.type !== "float32") {
          throw new Error(
            `Cannot read output "${name}" of ONNX model ${this.path}: expected float32, received ${tensor.type}`,
          );
        }
        return [name, { data: tensor.data as Float32Array, dims: tensor.dims }];
      }),
    );
  }

  /**
   * One score per row of `rows` (each of equal length): the rows go in as the only input,
   * shape [rows, features], and each row's score is the first value of its row of the first
   * output. Throws naming the model when it has more than one input or the rows are ragged.
   *
   * @example
   * ```ts
   * const scorer = await OnnxModel.load("scorer.onnx");
   * const [a, b] = await scorer.score([[0.1, 3], [0.9, 1]]);
   * ```
   */
  async score(rows: readonly (readonly number[])[]): Promise<number[]> {
    if (this.inputNames.length !== 1) {
      throw new Error(
        `Cannot score with ONNX model ${this.path}: expected one input, it has ${this.inputNames.length} (${
          this.inputNames.join(", ")
        }); use run()`,
      );
    }
    if (rows.length === 0) return [];
    const width = rows[0].length;
    const ragged = rows.findIndex((r) => r.length !== width);
    if (ragged >= 0) {
      throw new Error(
        `Cannot score with ONNX model ${this.path}: expected rows of ${width} features, row ${ragged} has ${
          rows[ragged].length
        }`,
      );
    }
    const outputs = await this.run({
      [this.inputNames[0]]: { data: Float32Array.from(rows.flat()), dims: [rows.length, width] },
    });
    const first = outputs[this.outputNames[0]].data;
    const perRow = first.length / rows.length;
    return rows.map((_, i) => first[i * perRow]);
  }

  /** Frees the session. */
  async release(): Promise<void> {
    await this.session.release();
  }
}

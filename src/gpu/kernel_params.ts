/**
 * Named kernel params: `packParams({rows, cols, eps: {f32: eps}})` packs a uniform struct and
 * keeps its field names and types, and `paramsMismatch` compares them with the WGSL `struct Params`
 * the kernel's shader declares (parsed once per pipeline by the pipeline cache), so a swapped,
 * missing or extra field is an error naming the kernel, the shader file and the field rather than
 * a silently wrong answer. Only scalar u32, i32 and f32 fields are supported (all rft kernels').
 */

/** The WGSL scalar types a params field can have. */
export type ParamType = "u32" | "i32" | "f32";

/** A params value: a number is a u32; `{f32: x}` and `{i32: x}` say the other types. */
export type ParamValue = number | { f32: number } | { i32: number };

/** One field of a params struct, in declaration order. */
export interface ParamField {
  name: string;
  type: ParamType;
}

/** A WGSL params struct: its name and fields. */
export interface ParamsStruct {
  name: string;
  fields: readonly ParamField[];
}

/** A packed params struct: its bytes (padded to 16) and the fields they hold, in order. */
export interface PackedParams {
  readonly bytes: ArrayBuffer;
  readonly fields: readonly ParamField[];
}

/**
 * Packs a params struct from its fields in WGSL declaration order (object key order): a number
 * is written as a u32, `{f32: x}` as an f32, `{i32: x}` as an i32. The bytes are padded to a
 * multiple of 16 as uniform buffers require.
 */
export function packParams(values: Readonly<Record<string, ParamValue>>): PackedParams {
  const entries = Object.entries(values);
  const words = Math.max(4, Math.ceil(entries.length / 4) * 4);
  const bytes = new ArrayBuffer(words * 4);
  const view = new DataView(bytes);
  const fields = entries.map(([name, value], i): ParamField => {
    if (typeof value === "number") {
      view.setUint32(i * 4, value, true);
      return { name, type: "u32" };
    }
    if ("f32" in value) {
      view.setFloat32(i * 4, value.f32, true);
      return { name, type: "f32" };
    }
    view.setInt32(i * 4, value.i32, true);
    return { name, type: "i32" };
  });
  return { bytes, fields };
}

/** Removes `//` and `/* *\/` comments from WGSL text. */
function stripComments(wgsl: string): string {
  return wgsl.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/\/\/[^\n]*/g, "");
}

/** Splits `text` at commas outside `<...>` and `(...)`. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "<" || c === "(") depth++;
    else if (c === ">" || c === ")") depth--;
    else if (c === "," && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== "");
}

/**
 * The params struct a kernel binds as `var<uniform>` in WGSL `source`: the one at `@binding(n)`
 * when `binding` is given (other uniform bindings hold tensors, see `BindingKind`), else the only
 * one; undefined when there is none. Throws (a bare reason: the caller adds the kernel and file)
 * when `binding` is omitted and there is more than one uniform, when its struct is missing, or
 * when a field is not a plain u32, i32 or f32.
 */
export function parseParamsStruct(source: string, binding?: number): ParamsStruct | undefined {
  const code = stripComments(source);
  const all = [
    ...code.matchAll(/@binding\((\d+)\)\s*var\s*<\s*uniform\s*>\s*\w+\s*:\s*(\w+)\s*;/g),
  ];
  const uniforms = binding === undefined ? all : all.filter((u) => Number(u[1]) === binding);
  if (uniforms.length === 0) return undefined;
  if (uniforms.length > 1) {
    throw new Error(`expected one var<uniform>, found ${uniforms.length}`);
  }
  const structName = uniforms[0][2];
  const body = new RegExp(`struct\\s+${structName}\\s*\\{([^}]*)\\}`).exec(code)?.[1];
  if (body === undefined) throw new Error(`the uniform's struct ${structName} is not declared`);
  const fields = splitTopLevel(body).map((member): ParamField => {
    const match = /^(\w+)\s*:\s*(u32|i32|f32)$/.exec(member);
    if (!match) {
      throw new Error(
        `struct ${structName} field "${member}" is not a plain u32, i32 or f32 (packParams writes ` +
          "only those)",
      );
    }
    return { name: match[1], type: match[2] as ParamType };
  });
  return { name: structName, fields };
}

/**
 * Why `given` does not match the `struct` a kernel's shader declares, naming the first field that
 * differs; undefined when they match (same names, same order, same types).
 */
export function paramsMismatch(
  struct: ParamsStruct,
  given: readonly ParamField[],
): string | undefined {
  const { name: structName, fields: declared } = struct;
  const declaredNames = declared.map((f) => f.name);
  const givenNames = given.map((f) => f.name);
  const missing = declared.find((f) => !givenNames.includes(f.name));
  if (missing) {
    return `params lack field "${missing.name}" (${missing.type}) of struct ${structName}`;
  }
  const extra = given.find((f) => !declaredNames.includes(f.name));
  if (extra) {
    return `params give field "${extra.name}", which struct ${structName} does not declare`;
  }
  for (let i = 0; i < declared.length; i++) {
    const [want, got] = [declared[i], given[i]];
    if (want.name !== got.name) {
      return `params give field "${got.name}" at position ${i}, where struct ${structName} declares ` +
        `"${want.name}" (declared order: ${declaredNames.join(", ")})`;
    }
    if (want.type !== got.type) {
      return `params field "${got.name}" is packed as ${got.type}, struct ${structName} declares ` +
        `${want.type}`;
    }
  }
  return undefined;
}

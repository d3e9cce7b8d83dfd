/**
 * The Experience: one sampled sequence (prompt + response tokens) with its action mask, the
 * generating policy's log probs, the reward, optional advantages, returns and reference log
 * probs, and where it came from (task, run, policy version). Validation, and conversion to the
 * flat snake_case row that parquet parts and JSONL files store. Does no I/O (see
 * `experience_io.ts`) and computes no advantages (the algorithm's advantage fn does).
 */

/** Where an experience came from. */
export interface ExperienceInfo {
  /** The task draw it answers (a `Task`'s `taskId`); experiences of one group share it. */
  taskId: string;
  /** Sample index within the task's group of `n` rollouts (0-based). */
  runId: number;
  /** Version of the policy that generated it (bumped by each weight sync). */
  policyVersion: number;
  /** Unique id, `${taskId}/${runId}/${uuid}` (see {@link newEid}). */
  eid: string;
}

/**
 * One rollout as the trainer consumes it. Every per-token array is aligned to `tokens`
 * (length `tokens.length`); advantages and returns are per token, as Trinity's advantage fns
 * write them (`score * action_mask`) and Marin's `RlExample.advantage` holds them, so a
 * sequence-level advantage is broadcast over the action tokens and is 0 elsewhere.
 */
export interface Experience {
  /** Token ids of prompt then response. */
  tokens: number[];
  /** How many leading tokens are the prompt. */
  promptLength: number;
  /** 1 for tokens the policy generated and is trained on; 0 for prompt and environment tokens. */
  actionMask: number[];
  /** Log prob of each token under the generating policy; 0 where `actionMask` is 0. */
  logprobs: number[];
  /** Scalar reward; null when the reward fn does not apply (TRL's convention). */
  reward: number | null;
  /** Per-token advantages (0 outside the action mask). */
  advantages?: number[];
  /** Per-token returns (0 outside the action mask). */
  returns?: number[];
  /** Per-token log probs under the reference model. */
  referenceLogprobs?: number[];
  /**
   * Per-token log probs of the tokens under a teacher model, 0 where `actionMask` is 0 (recorded
   * by on-policy distillation workflows; read by the `on_policy_distill` and `jsd` advantages).
   */
  teacherLogprobs?: number[];
  info: ExperienceInfo;
  /** Numbers the workflow reports for logging (e.g. `accuracy`, `format_score`). */
  metrics?: Record<string, number>;
  /** True for experiences of an evaluation taskset, which are logged, never trained on. */
  isEval?: boolean;
  /** The prompt as text, for logs. */
  promptText?: string;
  /** The response as text, for logs. */
  responseText?: string;
  /**
   * True when the response was cut at the length limit (Trinity's `truncate_status`); read by
   * the experience operators before the buffer, not stored in rows.
   */
  truncated?: boolean;
}

/** An {@link Experience} as one flat row of a parquet part or a JSONL line; null = absent. */
export interface ExperienceRow {
  tokens: number[];
  prompt_length: number;
  action_mask: number[];
  logprobs: number[];
  reward: number | null;
  advantages: number[] | null;
  returns: number[] | null;
  reference_logprobs: number[] | null;
  teacher_logprobs: number[] | null;
  task_id: string;
  run_id: number;
  policy_version: number;
  eid: string;
  metrics: Record<string, number> | null;
  is_eval: boolean | null;
  prompt_text: string | null;
  response_text: string | null;
}

/** Largest integer a row holds (token ids, run ids and versions are parquet INT32). */
const MAX_INT32 = 2 ** 31 - 1;

/** A fresh unique experience id, `${taskId}/${runId}/${uuid}`. */
export function newEid(taskId: string, runId: number): string {
  return `${taskId}/${runId}/${crypto.randomUUID()}`;
}

/**
 * Checks every field of `exp`; throws naming `where` (e.g. a file and row), the field, what was
 * expected and what was found. Returns `exp` for chaining.
 */
export function validateExperience(exp: Experience, where = "experience"): Experience {
  const fail = (field: string, detail: string): never => {
    throw new Error(`Invalid experience ${where}: "${field}" ${detail}`);
  };
  const { tokens, promptLength, actionMask, logprobs, reward, info } = exp;
  if (!Array.isArray(tokens) || tokens.length === 0) {
    fail("tokens", `is ${describe(tokens)}; expected a non-empty array of token ids`);
  }
  const n = tokens.length;
  tokens.forEach((t, i) => {
    if (!Number.isInteger(t) || t < 0 || t > MAX_INT32) {
      fail("tokens", `[${i}] is ${describe(t)}; expected an integer in [0, ${MAX_INT32}]`);
    }
  });
  if (!Number.isInteger(promptLength) || promptLength < 0 || promptLength > n) {
    fail("promptLength", `is ${describe(promptLength)}; expected an integer in [0, ${n}]`);
  }
  checkPerToken(actionMask, "actionMask", n, fail);
  actionMask.forEach((m, i) => {
    if (m !== 0 && m !== 1) fail("actionMask", `[${i}] is ${describe(m)}; expected 0 or 1`);
    if (m === 1 && i < promptLength) {
      fail("actionMask", `[${i}] is 1 inside the prompt (promptLength ${promptLength})`);
    }
  });
  checkPerToken(logprobs, "logprobs", n, fail);
  logprobs.forEach((lp, i) => {
    if (actionMask[i] === 0 && lp !== 0) {
      fail("logprobs", `[${i}] is ${lp} where actionMask is 0; expected 0`);
    }
  });
  if (reward !== null && !Number.isFinite(reward)) {
    fail("reward", `is ${describe(reward)}; expected a finite number or null`);
  }
  for (const field of ["advantages", "returns", "referenceLogprobs", "teacherLogprobs"] as const) {
    if (exp[field] !== undefined) checkPerToken(exp[field], field, n, fail);
  }
  if (typeof info !== "object" || info === null) fail("info", `is ${describe(info)}`);
  for (const field of ["taskId", "eid"] as const) {
    if (typeof info[field] !== "string" || info[field] === "") {
      fail(`info.${field}`, `is ${describe(info[field])}; expected a non-empty string`);
    }
  }
  for (const field of ["runId", "policyVersion"] as const) {
    const value = info[field];
    if (!Number.isInteger(value) || value < 0 || value > MAX_INT32) {
      fail(`info.${field}`, `is ${describe(value)}; expected an integer in [0, ${MAX_INT32}]`);
    }
  }
  if (exp.metrics !== undefined) {
    if (typeof exp.metrics !== "object" || exp.metrics === null || Array.isArray(exp.metrics)) {
      fail("metrics", `is ${describe(exp.metrics)}; expected an object of numbers`);
    }
    for (const [key, value] of Object.entries(exp.metrics)) {
      if (!Number.isFinite(value)) {
        fail(`metrics.${key}`, `is ${describe(value)}; expected a finite number`);
      }
    }
  }
  if (exp.isEval !== undefined && typeof exp.isEval !== "boolean") {
    fail("isEval", `is ${describe(exp.isEval)}; expected a boolean`);
  }
  for (const field of ["promptText", "responseText"] as const) {
    if (exp[field] !== undefined && typeof exp[field] !== "string") {
      fail(field, `is ${describe(exp[field])}; expected a string`);
    }
  }
  return exp;
}

/** The flat row of a valid `exp`; absent optional fields become null. */
export function experienceToRow(exp: Experience): ExperienceRow {
  return {
    tokens: exp.tokens,
    prompt_length: exp.promptLength,
    action_mask: exp.actionMask,
    logprobs: exp.logprobs,
    reward: exp.reward,
    advantages: exp.advantages ?? null,
    returns: exp.returns ?? null,
    reference_logprobs: exp.referenceLogprobs ?? null,
    teacher_logprobs: exp.teacherLogprobs ?? null,
    task_id: exp.info.taskId,
    run_id: exp.info.runId,
    policy_version: exp.info.policyVersion,
    eid: exp.info.eid,
    metrics: exp.metrics ?? null,
    is_eval: exp.isEval ?? null,
    prompt_text: exp.promptText ?? null,
    response_text: exp.responseText ?? null,
  };
}

/**
 * The experience of a row read from `where` (a file and row or line), validated. Null or
 * missing optional columns leave the field absent; a missing required column is an error.
 */
export function experienceFromRow(row: unknown, where: string): Experience {
  if (typeof row !== "object" || row === null || Array.isArray(row)) {
    throw new Error(`Invalid experience ${where}: row is ${describe(row)}; expected an object`);
  }
  const r = row as Record<string, unknown>;
  const required = <T>(key: string): T => {
    if (r[key] === undefined || r[key] === null) {
      throw new Error(`Invalid experience ${where}: column "${key}" is missing`);
    }
    return r[key] as T;
  };
  const exp: Experience = {
    tokens: required("tokens"),
    promptLength: required("prompt_length"),
    actionMask: required("action_mask"),
    logprobs: required("logprobs"),
    reward: (r.reward ?? null) as number | null,
    info: {
      taskId: required("task_id"),
      runId: required("run_id"),
      policyVersion: required("policy_version"),
      eid: required("eid"),
    },
  };
  const optional: [keyof Experience, string][] = [
    ["advantages", "advantages"],
    ["returns", "returns"],
    ["referenceLogprobs", "reference_logprobs"],
    ["teacherLogprobs", "teacher_logprobs"],
    ["metrics", "metrics"],
    ["isEval", "is_eval"],
    ["promptText", "prompt_text"],
    ["responseText", "response_text"],
  ];
  for (const [field, key] of optional) {
    if (r[key] !== undefined && r[key] !== null) Object.assign(exp, { [field]: r[key] });
  }
  return validateExperience(exp, where);
}

function checkPerToken(
  values: unknown,
  field: string,
  n: number,
  fail: (field: string, detail: string) => never,
): asserts values is number[] {
  if (!Array.isArray(values) || values.length !== n) {
    fail(field, `has ${describeLength(values)}; expected ${n} (one per token)`);
  }
  (values as unknown[]).forEach((v, i) => {
    if (!Number.isFinite(v)) fail(field, `[${i}] is ${describe(v)}; expected a finite number`);
  });
}

function describeLength(values: unknown): string {
  return Array.isArray(values) ? `${values.length} entries` : `no array (${describe(values)})`;
}

/** A value quoted for an error message, shortened. */
function describe(value: unknown): string {
  if (value === undefined) return "missing";
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

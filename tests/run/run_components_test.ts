/**
 * `validateComponents`: every registry name and its args, of every stage, is checked from the
 * loaded config alone (no model, no data read), and each problem is a ConfigError naming the
 * file, the stage's key path and what was wrong; Trinity's DAPO and SAPO choices pass.
 */

import { ConfigError } from "../../src/config/config_error.ts";
import { loadConfig } from "../../src/config/load_config.ts";
import { validateComponents } from "../../src/run/run_components.ts";
import { assertEquals } from "../_asserts.ts";
import { BASE, withFixture, writeConfig } from "../config/_fixture.ts";

/** The ConfigError message of validating `text` (BASE is the first lines), or "ok". */
async function validate(dir: string, text: string): Promise<string> {
  const config = await loadConfig(await writeConfig(dir, text), { env: {} });
  try {
    validateComponents(config);
    return "ok";
  } catch (err) {
    if (err instanceof ConfigError) return err.message.replace(`${dir}/`, "");
    throw err;
  }
}

/** Asserts each config text validates to a message that starts with its expected one. */
async function assertCases(dir: string, cases: readonly [string, string][]) {
  for (const [text, expected] of cases) {
    const message = await validate(dir, text);
    assertEquals(message.startsWith(expected), true, `${message}\nexpected: ${expected}`);
  }
}

Deno.test("validateComponents: taskset workflows, workflow_args, reward fns and reward_fn_args", async () => {
  await withFixture(async (dir) => {
    const taskset = (lines: string) => `${BASE}${lines}`;
    const cases: [string, string][] = [
      [taskset("      workflow_args: { use_chat_template: false }\n"), "ok"],
      [
        taskset("      default_workflow_type: math_boxed\n"),
        'config.yaml: buffer.explorer_input.taskset.default_workflow_type: Unknown workflow "math_boxed"; known: async_math_boxed_workflow, async_math_eval_workflow, async_math_rm_workflow, async_math_ruler_workflow, async_math_workflow, async_simple_workflow, countdown, frozen_lake_workflow, guess_number, math_boxed_workflow, math_eval_workflow, math_rm_workflow, math_ruler_workflow, math_trainable_ruler_workflow, math_workflow, on_policy_distill_math_workflow, on_policy_distill_workflow, rubric_judge_workflow, simple_workflow, sudoku_workflow, tool_call_workflow, toolcall_workflow. Did you mean "math_boxed_workflow"?',
      ],
      [
        taskset("      workflow_args: { use_base: true }\n"),
        'config.yaml: buffer.explorer_input.taskset.workflow_args: Cannot configure workflow "math_workflow": unknown key "use_base"; known: system_prompt, use_chat_template',
      ],
      [
        taskset(
          "      default_workflow_type: math_boxed_workflow\n      workflow_args: { use_base: true }\n",
        ),
        "ok",
      ],
      [
        taskset("      default_workflow_type: simple_workflow\n"),
        'config.yaml: buffer.explorer_input.taskset.default_reward_fn_type: expected a reward fn (workflow "simple_workflow" scores with one and has no default), found none; known: accuracy_reward, countdown, countdown_reward, exact_match, format, format_reward, math, math_boxed_reward, math_dapo_reward, math_reward, rlcr_reward, rm_gallery_reward, toolcall_reward',
      ],
      [
        taskset("      default_reward_fn_type: math_dapo\n"),
        'config.yaml: buffer.explorer_input.taskset.default_reward_fn_type: Unknown reward fn "math_dapo"; known: accuracy_reward, countdown, countdown_reward, exact_match, format, format_reward, math, math_boxed_reward, math_dapo_reward, math_reward, rlcr_reward, rm_gallery_reward, toolcall_reward. Did you mean "math_dapo_reward"?',
      ],
      [
        taskset("      reward_fn_args: { correct: 2 }\n"),
        'config.yaml: buffer.explorer_input.taskset.reward_fn_args: Cannot configure reward fn "math": unknown key "correct"; known: correct_reward, wrong_reward. Did you mean "correct_reward"?',
      ],
      [
        taskset(
          "      default_reward_fn_type: math_dapo_reward\n      reward_fn_args: { enable_overlong_penalty: true, penalty_factor: 1, max_response_length: 100 }\n",
        ),
        'config.yaml: buffer.explorer_input.taskset.reward_fn_args: Cannot configure reward fn "math_dapo_reward": key "cache_length" expected a number when enable_overlong_penalty is true, received null',
      ],
      [
        taskset(
          "    eval_tasksets:\n      - path: data/eval.jsonl\n        default_workflow_type: countdown\n        workflow_args: { max_turns: 3 }\n",
        ),
        'config.yaml: buffer.explorer_input.eval_tasksets[0].workflow_args: Cannot configure workflow "countdown": unknown key "max_turns"; known: use_chat_template',
      ],
    ];
    await assertCases(dir, cases);
  });
});

Deno.test("validateComponents: algorithm components and their args, operators, and later stages", async () => {
  await withFixture(async (dir) => {
    const algorithm = (lines: string) => `${BASE}algorithm:\n${lines}`;
    const cases: [string, string][] = [
      [algorithm("  algorithm_type: sapo\n  policy_loss_fn_args: { tau_pos: 0.5 }\n"), "ok"],
      [
        algorithm("  algorithm_type: sapo\n  policy_loss_fn_args: { tau_pos: 2 }\n"),
        'config.yaml: algorithm.policy_loss_fn_args: Cannot configure policy loss fn "sapo": expected tau_pos > 0 and tau_neg >= tau_pos, received tau_pos 2, tau_neg 1.05',
      ],
      [
        algorithm("  policy_loss_fn_args: { clip_ratio_c: 1 }\n"),
        'config.yaml: algorithm.policy_loss_fn_args: Cannot configure policy loss fn "ppo": key "clip_ratio_c" expected a number > 1, received 1',
      ],
      [
        algorithm("  advantage_fn: grpoo\n"),
        'config.yaml: algorithm.advantage_fn: Unknown advantage fn "grpoo"',
      ],
      [
        algorithm("  kl_loss_fn: k4\n"),
        'config.yaml: algorithm.kl_loss_fn: Unknown KL fn "k4"',
      ],
      [
        algorithm("  kl_penalty_fn_args: { coef: 1 }\n"),
        'config.yaml: algorithm.kl_penalty_fn_args: Cannot configure KL fn "none": unknown key "coef"',
      ],
      [
        algorithm("  entropy_loss_fn_args: { entropy_coeff: 1 }\n"),
        'config.yaml: algorithm.entropy_loss_fn_args: Cannot configure entropy loss fn "default": unknown key "entropy_coeff"',
      ],
      [
        algorithm("  sample_strategy: cooldown\n"),
        'config.yaml: algorithm.sample_strategy: Unknown sample strategy "cooldown"',
      ],
      [
        `${BASE}data_processor:\n  experience_pipeline:\n    operators:\n      - name: mask_response_truncated\n      - name: dapo_dynamic_sampling\n        args: { metric: accuracy }\n`,
        'config.yaml: data_processor.experience_pipeline.operators: Cannot configure experience operator "dapo_dynamic_sampling": unknown key "metric"; known: correct_threshold, metric_key',
      ],
      [
        `${BASE}stages:\n  - stage_name: warm\n  - stage_name: rl\n    buffer:\n      explorer_input:\n        taskset:\n          workflow_args: { use_bse: true }\n`,
        'config.yaml (stage "rl"): stages[1].buffer.explorer_input.taskset.workflow_args: Cannot configure workflow "math_workflow": unknown key "use_bse"',
      ],
    ];
    await assertCases(dir, cases);
  });
});

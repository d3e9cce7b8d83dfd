/**
 * Trinity-RFT's component registries in rft: every name of v0.5.2's registries is implemented
 * or refused naming the outside system it needs (only `remax` is missing, for the reason
 * given), the names later releases added each have a status, and Trinity's v0.5.2 tool-call
 * workflow name is rft's tool-call workflow.
 */

import { assertEquals } from "../_asserts.ts";
import {
  TRINITY_LATER,
  TRINITY_V052,
  type TrinityRegistry,
} from "../../src/config/trinity_names.ts";
import { trinityComponentStatus } from "../../src/config/trinity_registry.ts";
import { WORKFLOWS } from "../../src/workflow/mod.ts";

const entries = (table: Partial<Record<TrinityRegistry, readonly string[]>>) =>
  Object.entries(table).flatMap(([registry, names]) =>
    (names ?? []).map((name) => [registry as TrinityRegistry, name] as const)
  );

Deno.test("every v0.5.2 registry name is implemented or refused naming its system; only remax is missing", () => {
  const missing: string[] = [];
  for (const [registry, name] of entries(TRINITY_V052)) {
    const { status, note } = trinityComponentStatus(registry, name);
    if (status === "missing") missing.push(`${registry}.${name}`);
    if (status === "refused") assertEquals(note.startsWith("needs "), true, `${name}: ${note}`);
  }
  assertEquals(missing, ["advantage_fn.remax"]);
  assertEquals(
    trinityComponentStatus("advantage_fn", "remax").note.includes("reward_baselines"),
    true,
  );
  // 21 algorithm types, 15 policy losses, 17 advantage fns, 36 workflows, 7 reward fns, ...
  assertEquals(entries(TRINITY_V052).length, 121);
});

Deno.test("names of later releases: m2po implemented, outside systems named, the rest say why", () => {
  const status = (registry: TrinityRegistry, name: string) =>
    trinityComponentStatus(registry, name).status;
  assertEquals(status("algorithm_type", "m2po"), "implemented");
  assertEquals(status("policy_loss_fn", "m2po"), "implemented");
  assertEquals(status("reward_fn", "rlcr_reward"), "implemented");
  assertEquals(status("workflow", "intercode_sql_workflow"), "refused");
  assertEquals(status("advantage_fn", "cod"), "refused");
  for (const [registry, name] of entries(TRINITY_LATER)) {
    const { status, note } = trinityComponentStatus(registry, name);
    if (status !== "implemented") assertEquals(note.length > 20, true, `${name}: ${note}`);
  }
});

Deno.test("Trinity's tool_call_workflow is rft's toolcall_workflow", () => {
  assertEquals(WORKFLOWS.get("tool_call_workflow"), WORKFLOWS.get("toolcall_workflow"));
});

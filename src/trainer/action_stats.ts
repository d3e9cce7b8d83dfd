/**
 * Teacher-forced statistics of the action tokens of a batch of experiences (the log-prob of
 * each action token under a model, and its entropy and nec when asked), aligned to the tokens
 * (position t - 1 scores token t; 0 off the action mask). The experiences are grouped by where
 * their first action token lies, so each group's pass skips its own prompt columns: one short
 * row of expert data beside long rollouts does not make every row compute logits from column 0
 * (which, at a large vocabulary, may not fit one storage binding of the device).
 */

import type { Experience } from "../buffer/experience.ts";
import { bucketStart } from "../model/padded_batch.ts";
import type { PolicyModel, PositionStat } from "../model/policy.ts";

/** The first log-prob index experience `e` reads (t - 1 for its first action token t > 0). */
function firstActionLogprob(e: Experience): number {
  const t = e.actionMask.findIndex((m, i) => i > 0 && m !== 0);
  return t > 0 ? t - 1 : 0;
}

/** `stats` of each experience's action tokens under `model`: `result[k][i][t]`. */
export async function actionStats(
  model: PolicyModel,
  batch: readonly Experience[],
  stats: readonly PositionStat[],
  temperature: number,
): Promise<number[][][]> {
  const groups = new Map<number, number[]>();
  batch.forEach((e, i) => {
    const from = bucketStart(firstActionLogprob(e));
    groups.set(from, [...(groups.get(from) ?? []), i]);
  });
  const result: number[][][] = stats.map(() => new Array<number[]>(batch.length));
  for (const [from, members] of groups) {
    const values = await model.positionStats(members.map((i) => batch[i].tokens), stats, {
      temperature,
      from,
    });
    members.forEach((i, j) => {
      const e = batch[i];
      stats.forEach((_, k) => {
        result[k][i] = e.tokens.map((_, t) => (t > 0 && e.actionMask[t] ? values[k][j][t - 1] : 0));
      });
    });
  }
  return result;
}

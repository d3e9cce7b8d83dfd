/**
 * The expert buffer of `mix` (Trinity's expert data): the stage's SFT dataset as experiences in
 * a persistent buffer under `<stage>/expert/`, filled once (one pass over the dataset) and
 * replayed without end, least-used first (linear decay priority with decay 1), so every
 * demonstration comes round before any comes twice. A resumed stage reopens the filled buffer.
 */

import { datasetSource, type DatasetSourceOptions, type DatasetSpec } from "./dataset_source.ts";
import { ExperienceBuffer } from "./experience_buffer.ts";

/** Rows read per batch while filling. */
const FILL_BATCH = 256;

/** Opens (and on first use fills from `dataset`, one epoch) the expert buffer in `dir`. */
export async function openExpertBuffer(
  dir: string,
  dataset: DatasetSpec,
  options: Omit<DatasetSourceOptions, "totalEpochs">,
): Promise<ExperienceBuffer> {
  const { log } = options;
  const buffer = await ExperienceBuffer.open(dir, {
    capacity: Number.MAX_SAFE_INTEGER,
    replay: { decay: 1 },
  });
  const held = buffer.metrics().size;
  if (held > 0) {
    log(`expert buffer ${dir}: ${held} demonstrations restored`);
    return buffer;
  }
  const source = await datasetSource(dataset, { ...options, totalEpochs: 1 });
  let filled = 0;
  const draw = () => source.next(FILL_BATCH, { policyVersion: 0 });
  for (let next = await draw(); next; next = await draw()) {
    // Zero advantages: the mix loss reads them on every row, and masks expert rows out of the
    // RL part.
    for (const exp of next.batch) exp.advantages = exp.actionMask.map(() => 0);
    if (next.batch.length) await buffer.put(next.batch);
    filled += next.batch.length;
  }
  await source.close();
  if (filled === 0) {
    throw new Error(
      `mix draws expert data, but buffer.trainer_input.sft_warmup_dataset (${dataset.path}) gave no usable demonstration`,
    );
  }
  log(`expert buffer ${dir}: ${filled} demonstrations`);
  return buffer;
}

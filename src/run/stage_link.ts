/**
 * The NATS link of a cluster stage: the run is named by the stage's project, name and stage name,
 * so a trainer and its explorers that read the same config meet on the same resources.
 */

import { NatsLink } from "../cluster/nats_link.ts";
import type { StageConfig } from "../config/run_config.ts";
import type { StageContext } from "./stage_context.ts";

/** Connects to `url` and opens (or creates) the resources of `stage`'s run. */
export function openStageLink(
  stage: StageConfig,
  url: string,
  ctx: Pick<StageContext, "log" | "signal">,
): Promise<NatsLink> {
  return NatsLink.open({
    url,
    project: stage.project,
    name: stage.group ? `${stage.group}/${stage.name}` : stage.name,
    stage: stage.stageName,
    log: ctx.log,
    signal: ctx.signal,
  });
}

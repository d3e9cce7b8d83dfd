/**
 * The run's NATS link: resources named by project, name and stage; a message id published twice
 * is stored once; a server killed with SIGKILL and restarted on its store is waited out (the
 * operation retried and the failure logged), with the KV intact.
 */

import { assertEquals } from "../_asserts.ts";
import { clusterNames, NatsLink } from "../../src/cluster/nats_link.ts";
import { startNatsServer } from "../../bench/_nats_server.ts";

Deno.test("cluster names keep to what NATS accepts and tell runs and stages apart", () => {
  const names = clusterNames("my project", "run.1", "grpo");
  assertEquals(names.run, "my_project_run_1_grpo");
  assertEquals(names.tasksStream, "RFT_my_project_run_1_grpo_TASKS");
  assertEquals(names.batchSubject, "rft.my_project_run_1_grpo.exp.batch");
  assertEquals(
    clusterNames("p", "n", "sft").bucket === clusterNames("p", "n", "grpo").bucket,
    false,
  );
});

Deno.test("a repeated message id is stored once, and a killed server is retried until it is back", async () => {
  await using server = await startNatsServer();
  const lines: string[] = [];
  await using link = await NatsLink.open({
    url: server.url,
    project: "t",
    name: "link",
    stage: "main",
    log: (line) => lines.push(line),
  });
  const subject = link.names.doneSubject;
  assertEquals((await link.publish(subject, "{}", "done-1")).duplicate, false);
  assertEquals((await link.publish(subject, "{}", "done-1")).duplicate, true);
  await link.write("weights", { version: 3 });

  await server.kill();
  const back = new Promise((resolve) => setTimeout(resolve, 1500)).then(() => server.restart());
  const ack = await link.publish(subject, "{}", "done-2");
  await back;
  assertEquals(ack.duplicate, false);
  assertEquals(await link.read("weights"), { version: 3 });
  const info = await link.jsm.streams.info(link.names.experienceStream);
  assertEquals(info.state.messages, 2);
  assertEquals(lines.some((l) => l.includes("publishing done-2 failed")), true);
});

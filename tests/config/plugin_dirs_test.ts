import { resolve } from "node:path";
import { loadConfig } from "../../src/config/load_config.ts";
import { configPluginDirs } from "../../src/config/plugin_dirs.ts";
import { assertEquals } from "../_asserts.ts";
import { BASE, loadError, withFixture, writeConfig } from "./_fixture.ts";

Deno.test("plugin_dirs: read before the config, at the top and in stages, relative to the config file", async () => {
  await withFixture(async (dir) => {
    await Deno.mkdir(`${dir}/plugins_a`);
    await Deno.mkdir(`${dir}/plugins_b`);
    const path = await writeConfig(
      dir,
      `${BASE}plugin_dirs: ./plugins_a\nstages:\n  - stage_name: one\n    plugin_dirs: [plugins_b, ./plugins_a]\n`,
    );
    assertEquals(await configPluginDirs(path), [
      resolve(dir, "plugins_a"),
      resolve(dir, "plugins_b"),
    ]);
    const config = await loadConfig(path, { env: {} });
    assertEquals(config.stages[0].pluginDirs, [
      resolve(dir, "plugins_b"),
      resolve(dir, "plugins_a"),
    ]);
  });
});

Deno.test("plugin_dirs: none named gives []; a malformed file is left to loadConfig", async () => {
  await withFixture(async (dir) => {
    assertEquals(await configPluginDirs(await writeConfig(dir, BASE)), []);
    assertEquals(await configPluginDirs(await writeConfig(dir, "a: [", "bad.yaml")), []);
    assertEquals(await configPluginDirs(`${dir}/absent.yaml`), []);
  });
});

Deno.test("plugin_dirs: a directory that does not exist is one line naming the key", async () => {
  await withFixture(async (dir) => {
    const message = await loadError(dir, `${BASE}plugin_dirs: [./nowhere]\n`);
    assertEquals(
      message,
      `${dir}/config.yaml:7: plugin_dirs[0]: expected an existing file or directory, found neither "${Deno.cwd()}/nowhere" nor "${dir}/nowhere" (no such file or directory)`,
    );
  });
});

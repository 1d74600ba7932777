import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isolatedHome, startInstance, type TestInstance } from "./instance.js";

/** An instance whose ccmsg config holds this `llm` section (or none). */
export async function llmInstance(llm: Record<string, unknown> | undefined): Promise<TestInstance> {
  const home = isolatedHome();
  if (llm !== undefined) {
    mkdirSync(join(home.env.XDG_CONFIG_HOME!, "ccmsg"), { recursive: true });
    writeFileSync(join(home.env.XDG_CONFIG_HOME!, "ccmsg", "config.json"), JSON.stringify({ llm }));
  }
  return startInstance({ env: home.env });
}

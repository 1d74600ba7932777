import { claudeConfigHome, configFile } from "../state/paths.js";
import { collectHud } from "./collect.js";
import { renderHud } from "./render.js";
import { requireKnownSession } from "./session-context.js";

/** The HUD of a session — `flagSid` (refused when nothing here knows it),
 * else the one this process runs inside, else the most recently active — as
 * the `ecc.hud-status.v1` payload and as its readable rendering. Shared by
 * `ccmsg hud` and the MCP server's `hud` tool. */
export async function hudReport(stateDir: string, flagSid: string | undefined) {
  const { payload, context, localCheckNames, gateway } = await collectHud({
    stateDir,
    configPath: configFile(undefined),
    flagSid,
    claudeHome: claudeConfigHome(),
  });
  requireKnownSession(context, flagSid);
  return {
    payload,
    text: () => renderHud(payload, { localCheckNames, ...(gateway ? { gateway } : {}) }),
  };
}

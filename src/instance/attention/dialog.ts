import { findSessionFile } from "../../harness/claude/session-files.js";
import type { HarnessKind } from "../sessions/presence.js";
import type { DialogState } from "./engine.js";

/** Whether a session's harness shows a prompt now (DR-0062): Claude Code's
 * state file says `waiting` while its dialog is up, and when its status last
 * changed. Codex tells nothing. */
export async function dialogOf(
  harness: HarnessKind,
  configHome: string,
  sid: string,
): Promise<DialogState> {
  if (harness !== "claude") return undefined;
  const row = await findSessionFile(configHome, sid);
  if (row === undefined) return undefined;
  if (row.status === "waiting") return { waiting: true };
  return row.statusUpdatedAt === undefined
    ? { waiting: false }
    : { waiting: false, since: row.statusUpdatedAt };
}

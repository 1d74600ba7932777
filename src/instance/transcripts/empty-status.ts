import type { SessionStatusSnapshot } from "../../contract/session-status.js";

/** The `session_status:<sid>` value while no harness reports a session's
 * todos, agents or files: every list empty (known empty, not unknown). */
export function emptySessionStatus(
  sid: string | undefined,
): SessionStatusSnapshot & { sid?: string } {
  return {
    sid,
    todos: [],
    workflows: [],
    background: [],
    teammates: [],
    agent_tree: { teammates: [], agents: [], workflows: [] },
    external_files: [],
    workspace_folders: [],
  };
}

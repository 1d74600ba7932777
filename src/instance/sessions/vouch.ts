import { harnessProcessOf } from "../../harness/claude/session-files.js";
import {
  descendsFrom,
  isLoopbackAddress,
  type PeerEndpoint,
  peerPids,
} from "../../probes/process.js";

/**
 * Whether the harness vouches for a connection that greets as session `sid`.
 *
 * Any process of the owner may greet as any sid (the socket's mode is the
 * only proof on it). Where Claude Code's state file names a running process
 * for the sid, the session's own connections come from that process or its
 * children (hooks, `ccmsg subscribe` in its shell): a connection whose
 * process is provably outside that tree is `foreign`. Everything that cannot
 * be decided — no state file (Codex, a session without Claude Code), no `ss`,
 * a peer that left — is `unknown`, and is treated as today.
 */
export type Verdict =
  | { kind: "vouched"; harness: number }
  | { kind: "foreign"; harness: number; callers: number[] }
  | { kind: "unknown" };

export async function vouch(
  peer: PeerEndpoint | undefined,
  sid: string,
  configHome: string,
): Promise<Verdict> {
  const harness = await harnessProcessOf(configHome, sid);
  if (harness === undefined || peer === undefined) return { kind: "unknown" };
  // A peer on another machine is nobody's child here.
  if (peer.kind === "tcp" && !isLoopbackAddress(peer.remote.address))
    return { kind: "foreign", harness: harness.pid, callers: [] };
  const callers = await peerPids(peer);
  if (callers === undefined || callers.length === 0) return { kind: "unknown" };
  const inside = await Promise.all(callers.map((pid) => descendsFrom(pid, harness.pid)));
  if (inside.every((v) => v === true)) return { kind: "vouched", harness: harness.pid };
  if (inside.some((v) => v === false)) return { kind: "foreign", harness: harness.pid, callers };
  return { kind: "unknown" };
}

import { tmpdir } from "node:os";
import { join } from "node:path";
import { readJsonFile } from "../util/json-file.js";

// ECC's metrics bridge (ecc-surfaces §2.5): a per-session JSON aggregate that
// ECC's PostToolUse hook keeps at `<os tmpdir>/ecc-metrics-<sanitised id>.json`
// (`tool_count`, `total_cost_usd`, `files_modified_count`, `first_timestamp`).
// ccmsg only reads it; when ECC is not installed there is no file and the
// HUD's tool counts stay unknown.

/** ECC's file-name rule for a session id: refuse separators and `..`,
 * replace anything outside `[A-Za-z0-9_-]` with `_`, keep 64 characters. */
export function bridgeSessionId(raw: string): string | undefined {
  if (raw === "" || /[/\\]|\.\./.test(raw)) return undefined;
  const safe = raw.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
  return safe === "" ? undefined : safe;
}

export function bridgePath(sessionId: string, dir: string = tmpdir()): string | undefined {
  const safe = bridgeSessionId(sessionId);
  return safe === undefined ? undefined : join(dir, `ecc-metrics-${safe}.json`);
}

export interface BridgeMetrics {
  toolCount: number | null;
}

/** The bridge of a session, or undefined when there is none (or it is not
 * JSON). A field of the wrong type reads as unknown. */
export function readBridge(sessionId: string, dir?: string): BridgeMetrics | undefined {
  const path = bridgePath(sessionId, dir);
  if (path === undefined) return undefined;
  const data = readJsonFile(path);
  if (typeof data !== "object" || data === null) return undefined;
  const n = (data as { tool_count?: unknown }).tool_count;
  return { toolCount: typeof n === "number" && Number.isInteger(n) && n >= 0 ? n : null };
}

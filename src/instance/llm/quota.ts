import type {
  LlmUsageCredential,
  LlmUsageReadResult,
  LlmUsageSnapshot,
  LlmUsageWindow,
} from "../../contract/llm.js";
import type { LlmEvent } from "../../gateway/event.js";

// `llm_usage_read` (contract §4.3.5): quota per credential, read from the
// `anthropic-ratelimit-*` headers of the responses a gateway saw (DR-0043).
// A credential is known by the gateway's name for it (a short digest, never
// the secret); the newest reading of each is kept.

/** API-key limits: `<kind>-limit`, `-remaining`, `-reset` (an RFC 3339 time). */
const KEY_KINDS = ["requests", "tokens", "input-tokens", "output-tokens"] as const;
/** Subscription windows: `unified-<window>-utilization` (0..1), `-reset`
 * (Unix seconds), `-status`. */
const UNIFIED = /^unified-([a-z0-9_]+)-utilization$/;
const WINDOW_SECS: Record<string, number> = { "5h": 18_000, "7d": 604_800 };

interface Reading {
  at: number;
  headers: Record<string, string>;
}

export class LlmQuota {
  private readonly latest = new Map<string, Reading>();

  add(e: LlmEvent): void {
    if (e.ratelimit === undefined || e.credential === undefined) return;
    const held = this.latest.get(e.credential);
    if (held !== undefined && held.at > e.received_at) return;
    this.latest.set(e.credential, { at: e.received_at, headers: e.ratelimit });
  }

  read(refresh: boolean, now: number): LlmUsageReadResult {
    const credentials: LlmUsageCredential[] = [];
    for (const [name, r] of this.latest) {
      const c: LlmUsageCredential = {
        name,
        type: name.startsWith("oauth-") ? "oauth" : "api_key",
        support: "observed",
        snapshot: snapshotOf(r, now),
      };
      // The gateway keeps no credential, so nothing can be probed: the
      // reading shown is the last one observed.
      if (refresh) c.probe_error = "not probed: the gateway keeps no credential; last observed";
      credentials.push(c);
    }
    return { generated_at: now, credentials };
  }
}

function snapshotOf(r: Reading, now: number): LlmUsageSnapshot {
  const h = r.headers;
  const stamp = (w: LlmUsageWindow, resetAt: number) => {
    w.reset_at = Math.trunc(resetAt);
    // Read before the window reset: it no longer describes the window now.
    if (resetAt <= now && r.at < resetAt) w.expired = true;
  };
  const windows: Record<string, LlmUsageWindow> = {};
  for (const kind of KEY_KINDS) {
    const limit = Number(h[`${kind}-limit`]);
    const remaining = Number(h[`${kind}-remaining`]);
    if (!(limit > 0) || !Number.isFinite(remaining)) continue;
    const w: LlmUsageWindow = {
      utilization: Math.max(0, (limit - remaining) / limit),
      status: remaining > 0 ? "allowed" : "exhausted",
    };
    const reset = Date.parse(h[`${kind}-reset`] ?? "");
    if (Number.isFinite(reset)) stamp(w, reset);
    windows[kind.replaceAll("-", "_")] = w;
  }
  for (const [key, value] of Object.entries(h)) {
    const name = UNIFIED.exec(key)?.[1];
    const utilization = Number(value);
    if (name === undefined || !Number.isFinite(utilization) || utilization < 0) continue;
    const w: LlmUsageWindow = {
      utilization,
      status: h[`unified-${name}-status`] ?? h["unified-status"] ?? "unknown",
    };
    const reset = Number(h[`unified-${name}-reset`]);
    if (Number.isFinite(reset) && reset > 0) stamp(w, reset * 1000);
    if (WINDOW_SECS[name] !== undefined) w.window_secs = WINDOW_SECS[name];
    windows[name] = w;
  }
  const snapshot: LlmUsageSnapshot = { observed_at: r.at, windows };
  const overage = h["unified-overage-status"];
  if (overage !== undefined) {
    snapshot.overage = { status: overage };
    const why = h["unified-overage-disabled-reason"];
    if (why !== undefined) snapshot.overage.disabled_reason = why;
  }
  return snapshot;
}

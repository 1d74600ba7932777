import { createHash } from "node:crypto";

// What the gateway reads from a Messages API request body (in its worker,
// request-worker.ts, so a large body is never parsed on the thread that moves
// bytes): the session, the series and the prompt-cache lifetime asked for.

export interface RequestFacts {
  /** From `metadata.user_id`, when the request carries one we can read. */
  sid?: string;
  /** The conversation series: a digest of the system prompt and the first
   * message, which every turn of one conversation repeats verbatim (prompt
   * caching depends on it) and a sub-agent's differ in. */
  prefix?: string;
  model?: string;
  /** The longest cache lifetime any `cache_control` asks for; absent when
   * none does (nothing is cached). */
  cache_ttl_secs?: number;
}

const SID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TTL_SECS: Record<string, number> = { "5m": 300, "1h": 3600 };
/** A `cache_control` without a ttl gets the provider's default, 5 minutes. */
const DEFAULT_TTL_SECS = 300;

/** A harness session id, if `value` is one (lowercase UUID). */
export function asSid(value: unknown): string | undefined {
  return typeof value === "string" && SID.test(value) ? value : undefined;
}

/**
 * The session in `metadata.user_id`. Claude Code 2.1 sends a JSON object in
 * the string (`{"device_id":…,"account_uuid":…,"session_id":"<uuid>"}`);
 * earlier builds sent `user_<hash>_account_<uuid>_session_<uuid>`. Both are
 * read.
 */
export function sessionFromUserId(userId: unknown): string | undefined {
  if (typeof userId !== "string") return undefined;
  if (userId.startsWith("{")) {
    try {
      return asSid((JSON.parse(userId) as { session_id?: unknown }).session_id);
    } catch {
      return undefined;
    }
  }
  return asSid(/_session_([0-9a-f-]{36})$/.exec(userId)?.[1]);
}

/** Cache breakpoints move from turn to turn (a harness marks its newest
 * message), so they are no part of what names a conversation. */
const withoutCacheMarks = (key: string, value: unknown) =>
  key === "cache_control" ? undefined : value;

export function requestFacts(body: unknown): RequestFacts {
  if (typeof body !== "object" || body === null) return {};
  const b = body as Record<string, unknown>;
  const out: RequestFacts = {};
  const sid = sessionFromUserId((b.metadata as { user_id?: unknown } | undefined)?.user_id);
  if (sid !== undefined) out.sid = sid;
  if (typeof b.model === "string") out.model = b.model;
  const messages = Array.isArray(b.messages) ? b.messages : [];
  if (b.system !== undefined || messages.length > 0) {
    out.prefix = createHash("sha256")
      .update(JSON.stringify(b.system ?? null, withoutCacheMarks))
      .update("\n")
      .update(JSON.stringify(messages[0] ?? null, withoutCacheMarks))
      .digest("hex")
      .slice(0, 16);
  }
  let ttl: number | undefined;
  const see = (holder: unknown) => {
    const cc = (holder as { cache_control?: { ttl?: unknown } } | null)?.cache_control;
    if (typeof cc !== "object" || cc === null) return;
    const secs =
      typeof cc.ttl === "string" ? (TTL_SECS[cc.ttl] ?? DEFAULT_TTL_SECS) : DEFAULT_TTL_SECS;
    ttl = Math.max(ttl ?? 0, secs);
  };
  see(b);
  for (const list of [b.system, b.tools])
    if (Array.isArray(list)) for (const block of list) see(block);
  for (const m of messages) {
    const content = (m as { content?: unknown } | null)?.content;
    if (Array.isArray(content)) for (const block of content) see(block);
  }
  if (ttl !== undefined) out.cache_ttl_secs = ttl;
  return out;
}

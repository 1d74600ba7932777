// Constants of wire generation 3 (contract §1.10). One place for each number.

/** The wire generation, negotiated in `hello`; another generation is refused. */
export const PROTOCOL_VERSION = 3;
/** Per-line ceiling in both directions, counted in bytes. Also the harness
 * socket's own line limit, which is why it is this number. */
export const MAX_FRAME_BYTES = 1_048_576;
/** How deep free-form JSON the instance accepts may nest — work-item metadata,
 * a KV value, any control-pane request body: at most this many arrays/objects
 * inside each other (`{"a":1}` is one level). Deeper values are refused with
 * `invalid_args` (HTTP 400) before anything copies or serialises them, since
 * those steps recurse and a ~5,000-level value exhausts their stack. */
export const MAX_JSON_DEPTH = 64;
/** How long an undelivered message is kept (7 days). */
export const INBOX_RETENTION_MS = 604_800_000;
/** Undelivered messages kept per recipient; the 257th drops the oldest. */
export const INBOX_MAX_PER_SID = 256;
/** How long a lost session stays in `last_live`; equal to the inbox retention
 * on purpose, so a held message never outlives the row that explains it. */
export const LAST_LIVE_RETENTION_MS = 604_800_000;
/** Maximum `session_rename.title`, in code points (see text.ts). */
export const TITLE_MAX_CHARS = 200;
/** Lifetime of an auth challenge (5 min). */
export const AUTH_CHALLENGE_TTL_MS = 300_000;
/** Lifetime of a registration URL (10 min). */
export const REGISTER_TTL_MS = 600_000;
/** How long a token-family tombstone is kept; credential tombstones are kept
 * forever. */
export const FAMILY_TOMBSTONE_RETENTION_MS = 604_800_000;
/** Element name of the direct-delivery wrapper (§7.5). */
export const DIRECT_DELIVERY_TAG = "cross-session-message";
/** Value of the wrapper's `from` attribute: never a sid or a `uds:` path, which
 * the harness would try to dial. */
export const DIRECT_DELIVERY_FROM = "ccmsg";
/** Value of the wrapper's `from-mode` attribute. */
export const DIRECT_DELIVERY_FROM_MODE = "prompting";
/** Prompt-cache window assumed when a gateway event states neither an expiry
 * nor an origin. */
export const LLM_PROMPT_CACHE_TTL_MS = 300_000;
/** How many frames may wait for a receiver that is not keeping up before
 * publishing refuses an ordered (element/append/event) frame (§5.5). */
export const EGRESS_MAX_WAITING = 256;
/** Coalescing interval for value topics (`whole`, `per_instance_whole`):
 * at most one frame per topic × instance per this many ms (§5.5 pace rule). */
export const VALUE_TOPIC_INTERVAL_MS = 100;

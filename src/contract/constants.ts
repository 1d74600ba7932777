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
/** Maximum `session_rename.title`, in code points (see text.ts); also the
 * limit on the `title` of session meta, since both name the same thing. */
export const TITLE_MAX_CHARS = 200;
/** Lifetime of an auth challenge (5 min). */
export const AUTH_CHALLENGE_TTL_MS = 300_000;
/** Lifetime of a registration URL (10 min). */
export const REGISTER_TTL_MS = 600_000;
/** How long a token-family tombstone is kept; credential tombstones are kept
 * forever. */
export const FAMILY_TOMBSTONE_RETENTION_MS = 604_800_000;
/** How long a KV tombstone is kept after it was stored (instance rule,
 * DR-0049): as long as a disconnected peer's values are (§8.1), so a peer
 * back within that time still hears of every removal it missed. */
export const KV_TOMBSTONE_RETENTION_MS = 604_800_000;
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

// Length limits that keep every frame within MAX_FRAME_BYTES (issue 8, item 12).
// The contract states only the ceiling and TITLE_MAX_CHARS; these are this
// instance's, in code points like every length limit here (DR-0003). A value
// the instance echoes — into a reply, a topic frame or a row — is bounded
// where it enters, so that what carries it always fits a frame; the encoders
// (frames.ts) refuse whatever still would not.

/** `request_id`, echoed in every reply. A longer one is `bad_request`: a
 * request the instance will not echo cannot be identified. */
export const REQUEST_ID_MAX_CHARS = 256;
/** Session meta that names a path (`cwd`, `transcript_path`, `repo_root`):
 * Linux's PATH_MAX. */
export const META_PATH_MAX_CHARS = 4096;
/** Every other session meta string (`repo`, `ws`, `branch`, `model`,
 * `effort`) and `hello.client_version`. `title` has TITLE_MAX_CHARS. */
export const META_NAME_MAX_CHARS = 256;
/** `message_send`, `notify_send` and `say_post` text. Written into JSON a code
 * point takes at most 6 bytes (`\u0001`), so the longest text from the
 * longest label still fits one inbox or notify frame: 6 × 131,072 B = 768 KiB. */
export const MESSAGE_TEXT_MAX_CHARS = 131_072;
/** A topic name in `topic_subscribe` / `topic_unsubscribe`; every name of this
 * generation is far shorter (`kv:` + 64). */
export const TOPIC_NAME_MAX_CHARS = 256;
/** `message_send.candidates`, most recently active first: enough to pick
 * from, and a bound on a reply that lists live sessions. */
export const CANDIDATES_MAX = 64;
/** A KV value, serialised: it must fit one frame beside its key and the
 * envelope, both in the `kv:<ns>` frame that carries it and in `kv_read`'s
 * reply (a key is at most 256 code points; 4 KiB covers both). */
export const KV_VALUE_MAX_BYTES = MAX_FRAME_BYTES - 4096;

/** The literal that names a person as a sender (`Sender = Sid | "user"`). */
export const USER_SENDER = "user";

// The identifiers' patterns and predicates (contract §2) without their
// schemas: a client that checks a sid must not load the schema library.
// Every pattern is anchored at both ends and kept as an exported string so the
// topic-name pattern and tests can reuse the one spelling.

export const SID_PATTERN = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";
export const INSTANCE_ID_PATTERN = "^[0-9a-f]{32}$";
export const MID_PATTERN = "^[0-9a-f]{32}/\\d+$";
export const NAMESPACE_PATTERN = "[a-z][a-z0-9_]{0,63}";
export const BASE64URL_PATTERN = "^[A-Za-z0-9_-]+$";
/** `http(s)://<host>[:<port>][/<prefix>]/` — lowercase host (or a bracketed IPv6
 * literal), trailing slash required, no query, no fragment. The default-port
 * rule is checked by `canonicalEndpoint`, which a pattern cannot express
 * readably. */
export const ENDPOINT_PATTERN =
  "^https?://(?:[a-z0-9.-]+|\\[[0-9a-f:.]+\\])(?::[0-9]{1,5})?/(?:[^?#\\s]*/)?$";
export const TRANSCRIPT_ITEM_ID_PATTERN = "^[^\\s:]+:(0|[1-9][0-9]*)$";
export const TRANSCRIPT_ITEM_TYPE_PATTERN = "^[a-z]+(?::[A-Za-z0-9_.-]+)*$";
export const TRANSCRIPT_ITEM_SELECTOR_PATTERN =
  "^-?(?:@[A-Za-z0-9][A-Za-z0-9_-]*|[a-z]+(?::[A-Za-z0-9_.-]+)*)$";

/** How a sid is described wherever one is refused. */
export const SID_DESCRIPTION = "a session id is a lower-case UUID";

/** Longest mid: an instance id, a slash and a counter of up to 31 digits. The
 * pattern alone bounds no length, and a mid is echoed (`reply_to`). */
export const MID_MAX_CHARS = 64;

const sidRe = new RegExp(SID_PATTERN);
const instanceRe = new RegExp(INSTANCE_ID_PATTERN);
const midRe = new RegExp(MID_PATTERN);
const endpointRe = new RegExp(ENDPOINT_PATTERN);

export function isSid(value: unknown): value is string {
  return typeof value === "string" && value.length === 36 && sidRe.test(value);
}
export function isInstanceId(value: unknown): value is string {
  return typeof value === "string" && value.length === 32 && instanceRe.test(value);
}
export function isMid(value: unknown): value is string {
  return typeof value === "string" && value.length <= MID_MAX_CHARS && midRe.test(value);
}

/** The instance a mid was minted by, and its counter. */
export function parseMid(mid: string): { instance: string; counter: number } {
  const slash = mid.indexOf("/");
  return { instance: mid.slice(0, slash), counter: Number(mid.slice(slash + 1)) };
}

/**
 * The browser-canonical spelling of an endpoint, or `undefined` when the value
 * cannot be one (query, fragment, credentials, other scheme). Lowercases the
 * host (punycode for IDN, as `URL` does), drops a default port, and requires
 * the trailing slash instead of adding it: `/ccmsg` and `/ccmsg/` must not
 * become two spellings of one endpoint, so a missing slash is refused.
 */
export function canonicalEndpoint(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "")
    return undefined;
  if (value.includes("?") || value.includes("#")) return undefined;
  if (!url.pathname.endsWith("/")) return undefined;
  const out = `${url.protocol}//${url.host}${url.pathname}`;
  return endpointRe.test(out) ? out : undefined;
}

// File reservations between agents (this implementation's extension, DR-0041).
// A reservation is one KV entry in namespace `reservations` (contract §4.3.6,
// §11), so it travels with the KV store: last writer wins on `updated_at`, a
// removal is a tombstone, and `kv:reservations` carries every change. Pure: the
// CLI, the hook, the instance's sweeper, the HUD and the console all decide
// with these functions.

/** The KV namespace reservations live in. */
export const RESERVATIONS_NS = "reservations";

/** Who holds a reservation: a session, or the person (`sid: null`). */
export interface ReservationHolder {
  sid: string | null;
  /** What a reader calls the holder: the session's worktree or branch. */
  name?: string;
}

/** The value of one `reservations` entry (`v: 1`). */
export interface Reservation {
  v: 1;
  /** An absolute path glob (see `globMatches`). */
  glob: string;
  holder: ReservationHolder;
  /** Others' edits inside an exclusive reservation are conflicts; inside a
   * shared one they are only pointed out. */
  exclusive: boolean;
  reason?: string;
  /** The directory a relative glob was resolved against, and its repository. */
  cwd?: string;
  repo_root?: string;
  /** The instance the holder reserved through (a mesh reader's hint). */
  instance?: string;
  created_at: number;
  expires_at: number;
}

/** A reservation with the KV key it is stored under. */
export interface KeyedReservation extends Reservation {
  key: string;
}

/** The longest glob a reservation may hold (code points). */
export const GLOB_MAX_LENGTH = 1024;
/** The longest reason (code points). */
export const REASON_MAX_LENGTH = 500;

/** The holder part of a key: the session id, or `person`. */
export function holderKey(sid: string | null): string {
  return sid ?? "person";
}

/** A KV value read as a reservation, or undefined when it is not one: values
 * in KV are anyone's JSON, so every reader checks before it trusts. */
export function parseReservation(value: unknown): Reservation | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const r = value as Record<string, unknown>;
  const holder = r.holder as Record<string, unknown> | null | undefined;
  if (r.v !== 1 || typeof r.glob !== "string" || !r.glob.startsWith("/")) return undefined;
  if (typeof holder !== "object" || holder === null) return undefined;
  if (holder.sid !== null && typeof holder.sid !== "string") return undefined;
  if (typeof r.exclusive !== "boolean") return undefined;
  if (!Number.isFinite(r.created_at) || !Number.isFinite(r.expires_at)) return undefined;
  const out: Reservation = {
    v: 1,
    glob: r.glob,
    holder: { sid: holder.sid as string | null },
    exclusive: r.exclusive,
    created_at: r.created_at as number,
    expires_at: r.expires_at as number,
  };
  if (typeof holder.name === "string") out.holder.name = holder.name;
  for (const k of ["reason", "cwd", "repo_root", "instance"] as const)
    if (typeof r[k] === "string") out[k] = r[k] as string;
  return out;
}

/** The live reservations among KV entries (`{key, value}`; tombstones and
 * foreign values skipped): expired ones are ignored by every reader, before
 * the instance's sweeper removes them. */
export function liveReservations(
  entries: readonly { key: string; value?: unknown }[],
  now: number,
): KeyedReservation[] {
  const out: KeyedReservation[] = [];
  for (const e of entries) {
    const r = parseReservation(e.value);
    if (r !== undefined && r.expires_at > now) out.push({ ...r, key: e.key });
  }
  return out.sort((a, b) => a.expires_at - b.expires_at || a.key.localeCompare(b.key));
}

/** Whether `r` is held by the caller (`sid`, or null for the person). */
export function isOwn(r: Reservation, sid: string | null): boolean {
  return r.holder.sid === sid;
}

/** The others' reservations a new one (`glob`, `exclusive`) by `sid` would
 * overlap: any of theirs when it is exclusive, their exclusive ones when it
 * is shared. */
export function reservationConflicts(
  live: readonly KeyedReservation[],
  mine: { sid: string | null; glob: string; exclusive: boolean },
): KeyedReservation[] {
  return live.filter(
    (r) =>
      !isOwn(r, mine.sid) && (mine.exclusive || r.exclusive) && globsOverlap(r.glob, mine.glob),
  );
}

/** Others' reservations an edit of `path` (absolute) by `sid` falls in:
 * exclusive ones first. */
export function editConflicts(
  live: readonly KeyedReservation[],
  sid: string | null,
  path: string,
): KeyedReservation[] {
  return live
    .filter((r) => !isOwn(r, sid) && globMatches(r.glob, path))
    .sort((a, b) => Number(b.exclusive) - Number(a.exclusive));
}

// --- globs ---------------------------------------------------------------
//
// An absolute, `/`-separated path pattern. Empty segments are dropped (`/a//b`
// is `/a/b`). A segment that is exactly `**` matches zero or more whole
// segments; elsewhere `*` matches any run of characters within a segment
// (none included, dot files included) and `?` exactly one; every other
// character is itself (no classes, braces or escapes). Matching is by code
// point and case-sensitive.
//
// Overlap — "some path matches both" — is decided exactly over that language:
// a search of the product of the two patterns' automata, taking the alphabet
// as unbounded (so `?` against `?` always finds a character). What the
// language cannot see is left to the caller, conservatively: the CLI resolves
// symlinks in a glob's literal prefix and in the edited path, and a glob
// naming a directory reserves everything below it.

type Token = { star: true } | { any: true } | { ch: string };
/** A segment: `**`, or its text with whether it holds a wildcard (its
 * tokens are made only when two segments cannot be compared as text). */
type Segment = "**" | { text: string; wild: boolean; tokens?: Token[] };

function segmentsOf(glob: string, literal: boolean): Segment[] {
  return glob
    .split("/")
    .filter((s) => s !== "")
    .map((s): Segment => {
      if (literal) return { text: s, wild: false };
      if (s === "**") return "**";
      return { text: s, wild: s.includes("*") || s.includes("?") };
    });
}

function tokensOf(s: { text: string; wild: boolean; tokens?: Token[] }): Token[] {
  s.tokens ??= Array.from(s.text, (c): Token => {
    if (s.wild && c === "*") return { star: true };
    if (s.wild && c === "?") return { any: true };
    return { ch: c };
  });
  return s.tokens;
}

/** Whether two segment patterns share a (non-empty) segment. */
function segmentsMeet(
  ps: { text: string; wild: boolean; tokens?: Token[] },
  qs: { text: string; wild: boolean; tokens?: Token[] },
): boolean {
  if (!ps.wild && !qs.wild) return ps.text === qs.text;
  const p = tokensOf(ps);
  const q = tokensOf(qs);
  const seen = new Set<number>();
  const w = q.length + 1;
  const visit = (i: number, j: number): boolean => {
    if (i === p.length && j === q.length) return true;
    const id = i * w + j;
    if (seen.has(id)) return false;
    seen.add(id);
    const a = p[i];
    const b = q[j];
    // A star matching nothing.
    if (a !== undefined && "star" in a && visit(i + 1, j)) return true;
    if (b !== undefined && "star" in b && visit(i, j + 1)) return true;
    if (a === undefined || b === undefined) return false;
    // One character read by both: a star stays where it is.
    if ("ch" in a && "ch" in b && a.ch !== b.ch) return false;
    return visit("star" in a ? i : i + 1, "star" in b ? j : j + 1);
  };
  return visit(0, 0);
}

function patternsMeet(p: Segment[], q: Segment[]): boolean {
  // Leading segments that are plain text on both sides must be equal: the
  // usual answer ("not in this directory") comes without a search.
  let k = 0;
  for (; k < p.length && k < q.length; k++) {
    const a = p[k]!;
    const b = q[k]!;
    if (a === "**" || b === "**" || a.wild || b.wild) break;
    if (a.text !== b.text) return false;
  }
  const seen = new Set<number>();
  const w = q.length + 1;
  const visit = (i: number, j: number): boolean => {
    if (i === p.length && j === q.length) return true;
    const id = i * w + j;
    if (seen.has(id)) return false;
    seen.add(id);
    const a = p[i];
    const b = q[j];
    // `**` matching no segment.
    if (a === "**" && visit(i + 1, j)) return true;
    if (b === "**" && visit(i, j + 1)) return true;
    if (a === undefined || b === undefined) return false;
    // `**` taking one segment of the other side (every segment pattern
    // matches some non-empty segment).
    if (a === "**") return b !== "**" && visit(i, j + 1);
    if (b === "**") return visit(i + 1, j);
    return segmentsMeet(a, b) && visit(i + 1, j + 1);
  };
  return visit(k, k);
}

/** Whether the absolute `path` (taken literally) matches `glob`. */
export function globMatches(glob: string, path: string): boolean {
  return patternsMeet(segmentsOf(glob, false), segmentsOf(path, true));
}

/** Whether some path matches both globs (exact over the glob language). */
export function globsOverlap(a: string, b: string): boolean {
  return patternsMeet(segmentsOf(a, false), segmentsOf(b, false));
}

/** Whether a glob has any wildcard (else it names one path). */
export function hasWildcard(glob: string): boolean {
  return segmentsOf(glob, false).some((s) => s === "**" || s.wild);
}

/** The segments before the first wildcard, as an absolute path. */
export function literalPrefix(glob: string): string {
  const parts: string[] = [];
  for (const s of glob.split("/").filter((x) => x !== "")) {
    if (s === "**" || s.includes("*") || s.includes("?")) break;
    parts.push(s);
  }
  return `/${parts.join("/")}`;
}

// --- durations -----------------------------------------------------------

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** The longest a reservation may be asked for at once. */
export const MAX_RESERVATION_MS = 30 * 86_400_000;

/** `90s`, `30m`, `2h`, `1d`, or a sum such as `1h30m`, in ms; undefined when
 * the text is not one, is zero, or is longer than MAX_RESERVATION_MS. */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (!/^(\d+[smhd])+$/.test(t)) return undefined;
  let ms = 0;
  for (const [, n, unit] of t.matchAll(/(\d+)([smhd])/g)) ms += Number(n) * UNIT_MS[unit!]!;
  return ms > 0 && ms <= MAX_RESERVATION_MS ? ms : undefined;
}

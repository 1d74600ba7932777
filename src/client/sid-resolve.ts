import type { PerInstance } from "../contract/fold.js";
import { isSid, SID_DESCRIPTION } from "../contract/ids.js";
import type { PeersData } from "../contract/peers.js";
import { type KnownSession, SidRefusal } from "./sid-refusal.js";

// What a person types for a session, turned into its sid — the one set of
// rules the CLI and the MCP server share:
//
// - A whole sid (any case) is taken as it is, without reading anything.
// - `@title` names the session with exactly that title.
// - Anything else names the sessions whose sid starts with it (at least
//   MIN_PREFIX_HEX hex digits, dashes optional) and those titled exactly so.
// - One match is the answer. Of several, the one that is live wins when it is
//   the only live one (a message reaches it; a title is often reused by a new
//   session while the old one is still listed as lost); a command that wants
//   an ended session (resume) asks for the ended one instead. Anything still
//   ambiguous is refused, listing the candidates; so is no match.

/** The fewest hex digits of a sid taken as a prefix (`ccmsg peers` shows 8). */
export const MIN_PREFIX_HEX = 4;

/** A session as the instance listed it (`peers`), with what picks it out. */
/** Which state wins among several matches, if only one is in it. */
export type Prefer = "live" | "ended";

/** The whole sid `typed` spells, if it is one: nothing to look up. */
export function wholeSid(typed: string): string | undefined {
  const lower = typed.toLowerCase();
  return isSid(lower) ? lower : undefined;
}

/** Every session of a `peers` value held across instances (`foldTopicFrame`),
 * once each: a sid listed by two instances (moved, or lost on one and live on
 * another) is live when either lists it connected. */
export function knownSessions(held: PerInstance<PeersData>): KnownSession[] {
  const bySid = new Map<string, KnownSession>();
  const add = (r: PeersData["peers"][number] | PeersData["last_live"][number], live: boolean) => {
    const seen = bySid.get(r.sid);
    if (seen?.live) return;
    if (seen !== undefined && !live) return;
    const row: KnownSession = { sid: r.sid, instance: r.instance, repo: r.repo, ws: r.ws, live };
    if (r.title !== undefined) row.title = r.title;
    bySid.set(r.sid, row);
  };
  for (const data of Object.values(held)) {
    for (const p of data.peers) add(p, true);
    for (const l of data.last_live) add(l, false);
  }
  return [...bySid.values()];
}

/**
 * The sid `typed` names among `sessions` (see the rules above), or a
 * `SidRefusal` that says, in words, which argument (`what`, e.g. "the
 * recipient") was tried as what.
 */
export function resolveSid(
  typed: string,
  sessions: readonly KnownSession[],
  what: string,
  prefer: Prefer = "live",
): string {
  const whole = wholeSid(typed);
  if (whole !== undefined) return whole;
  const named = `${what} ${JSON.stringify(typed)}`;
  const { matches, none } = typed.startsWith("@")
    ? byTitle(typed.slice(1), sessions, named)
    : byPrefixOrTitle(typed, sessions, named);
  if (matches.length === 0) throw none();
  if (matches.length === 1) return matches[0]!.sid;
  const preferred = matches.filter((s) => s.live === (prefer === "live"));
  if (preferred.length === 1) return preferred[0]!.sid;
  throw new SidRefusal(
    "invalid_args",
    [
      `${named} matches ${matches.length} sessions: give more of the id, or @title`,
      ...candidateLines(matches),
    ].join("\n"),
    matches,
  );
}

/** What a lookup found, and the refusal when it found nothing. */
interface Lookup {
  matches: KnownSession[];
  none: () => SidRefusal;
}

/** `@title`: the sessions with exactly that title. */
function byTitle(title: string, sessions: readonly KnownSession[], named: string): Lookup {
  return {
    matches: title === "" ? [] : sessions.filter((s) => s.title === title),
    none: () =>
      title === ""
        ? new SidRefusal("invalid_args", `${named} names no title: write @ and the title`)
        : new SidRefusal(
            "session_not_found",
            `${named}: no session known here has the title ${JSON.stringify(title)} (ccmsg peers lists the sessions)`,
          ),
  };
}

/** The sessions whose sid `typed` begins (given enough hex digits), and
 * those titled exactly `typed`. */
function byPrefixOrTitle(typed: string, sessions: readonly KnownSession[], named: string): Lookup {
  const hex = hexOf(typed);
  const long = hex !== undefined && hex.length >= MIN_PREFIX_HEX;
  const prefixed = long ? sessions.filter((s) => s.sid.replaceAll("-", "").startsWith(hex)) : [];
  const titled = sessions.filter((s) => s.title === typed && !prefixed.includes(s));
  const none = () => {
    if (hex === undefined)
      return new SidRefusal(
        "invalid_args",
        `${named} is neither a session id (${SID_DESCRIPTION}) nor the title of a session known here (ccmsg peers lists the sessions)`,
      );
    if (!long)
      return new SidRefusal(
        "invalid_args",
        `${named} is too short: give at least ${MIN_PREFIX_HEX} hex digits of a session id, or a session's title (@title)`,
      );
    return new SidRefusal(
      "session_not_found",
      `${named} is not a session id, prefix or title known here (ccmsg peers lists the sessions)`,
    );
  };
  return { matches: [...prefixed, ...titled], none };
}

/** One line per candidate: enough of its sid to tell it from the others,
 * live or ended, title, where it works, and its instance when they differ. */
export function candidateLines(candidates: readonly KnownSession[]): string[] {
  const width = distinctWidth(candidates.map((c) => c.sid));
  const instances = new Set(candidates.map((c) => c.instance)).size;
  return candidates.map((c) => {
    const parts = [
      c.live ? "live" : "ended",
      c.title === undefined ? "untitled" : JSON.stringify(c.title),
      c.repo || c.ws ? `${c.repo}/${c.ws}` : "location unknown",
    ];
    if (instances > 1) parts.push(`on instance ${c.instance.slice(0, 8)}`);
    return `  ${c.sid.slice(0, width)}: ${parts.join(", ")}`;
  });
}

/** How many leading characters tell these sids apart: at least the 8 that
 * `ccmsg peers` shows. */
function distinctWidth(sids: readonly string[]): number {
  let width = 8;
  while (width < 36 && new Set(sids.map((s) => s.slice(0, width))).size < sids.length) width++;
  return width;
}

/** The hex digits of a typed prefix (lower case, dashes dropped), or
 * undefined when it is not one. */
function hexOf(typed: string): string | undefined {
  if (!/^[0-9a-fA-F-]+$/.test(typed)) return undefined;
  const hex = typed.replaceAll("-", "").toLowerCase();
  return hex === "" ? undefined : hex;
}

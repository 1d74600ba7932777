import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { peerMessage } from "./claude/peer-message.js";
import { containmentRefusal } from "./transcript-files.js";
import { parseRecord, readLines } from "./transcript-lines.js";

// Searching a config home's transcripts (contract §4.3.3 `session_search`):
// Claude Code's `projects/<dir>/<sid>.jsonl`, Codex's
// `sessions/YYYY/MM/DD/rollout-…-<thread>.jsonl` (harness.md §6.1). Only what
// the person and the agent said counts — never tool calls, tool output,
// thinking or harness-injected text. Files are read in bounded chunks
// (transcript-lines.ts), newest first, until a deadline; this runs on a worker
// thread, so the whole walk is plain sequential code.

export type SearchHarness = "claude" | "codex";

/** What the caller asks (the op's arguments, minus what the instance decides). */
export interface SearchRequest {
  query?: string;
  case_sensitive?: boolean;
  regex?: boolean;
  target_user?: boolean;
  target_agent?: boolean;
  cwd?: string;
  sid?: string;
  modified_within_ms?: number;
}

/** One message that matched (the contract's `SessionSearchMatch`). */
export interface FoundMatch {
  role: "user" | "agent";
  text: string;
  said_at?: number;
}

/** One transcript that matched, with what the file itself tells. */
export interface FoundSession {
  sid: string;
  file: string;
  cwd?: string;
  title?: string;
  created_at: number;
  updated_at: number;
  size: number;
  matches: FoundMatch[];
  model?: string;
  effort?: string;
}

/** A longer query is refused: a search box, not a program. */
export const MAX_QUERY_CHARS = 4096;
/** Clauses (lines) at most, and terms per clause. */
export const MAX_CLAUSES = 32;
export const MAX_TERMS = 32;
/** A longer regular expression is refused. With the deadline (and the worker
 * that is ended past it), this is what bounds a pattern's cost. */
export const MAX_PATTERN_CHARS = 512;
/** Matches kept per session, and characters of each (around the match). */
export const MAX_MATCHES = 10;
export const MAX_MATCH_CHARS = 300;
/** Sessions reported at most; more make the answer `truncated`. */
export const MAX_HITS = 200;

/** Finds a term in a message; the index, or -1. */
type Term = (text: string, lower: string) => number;

export interface CompiledSearch {
  /** ORed clauses of ANDed terms; empty: every session (no query). */
  clauses: Term[][];
  user: boolean;
  agent: boolean;
  /** Lower-cased words that must all be in the session's cwd. */
  cwdWords: string[];
  sid?: string;
  modifiedAfter?: number;
  /** Whether terms compare with lower-cased text. */
  folded: boolean;
}

/** Compile the arguments, or say in words what is wrong with them. */
export function compileSearch(
  req: SearchRequest,
  now = Date.now(),
): { ok: true; search: CompiledSearch } | { ok: false; why: string } {
  const query = req.query ?? "";
  if (query.length > MAX_QUERY_CHARS)
    return { ok: false, why: `query: at most ${MAX_QUERY_CHARS} characters` };
  const caseSensitive = req.case_sensitive === true;
  const lines = query
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  if (lines.length > MAX_CLAUSES)
    return { ok: false, why: `query: at most ${MAX_CLAUSES} lines (clauses)` };
  const clauses: Term[][] = [];
  for (const line of lines) {
    if (req.regex === true) {
      if (line.length > MAX_PATTERN_CHARS)
        return { ok: false, why: `query: a pattern is at most ${MAX_PATTERN_CHARS} characters` };
      let re: RegExp;
      try {
        re = new RegExp(line, caseSensitive ? "" : "i");
      } catch (error) {
        return { ok: false, why: `query: not a regular expression: ${(error as Error).message}` };
      }
      clauses.push([(text) => text.search(re)]);
    } else {
      const words = line.split(/\s+/);
      if (words.length > MAX_TERMS)
        return { ok: false, why: `query: at most ${MAX_TERMS} terms in a clause` };
      clauses.push(
        words.map((w) => {
          const needle = caseSensitive ? w : w.toLowerCase();
          return caseSensitive
            ? (text) => text.indexOf(needle)
            : (_text, lower) => lower.indexOf(needle);
        }),
      );
    }
  }
  const search: CompiledSearch = {
    clauses,
    user: req.target_user !== false,
    agent: req.target_agent !== false,
    cwdWords: (req.cwd ?? "")
      .toLowerCase()
      .split(/\s+/)
      .filter((w) => w !== ""),
    folded: !caseSensitive && req.regex !== true,
  };
  if (req.sid !== undefined && req.sid !== "") search.sid = req.sid.toLowerCase();
  if (req.modified_within_ms !== undefined) search.modifiedAfter = now - req.modified_within_ms;
  return { ok: true, search };
}

/** A transcript to read. */
interface Candidate {
  sid: string;
  path: string;
  size: number;
  mtime: number;
  birth: number;
}

const SID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Directory entries, or none when it cannot be read. */
async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

/** Every transcript of the config home that passes the sid and age filters,
 * newest first. Claude: `projects/<dir>/<sid>.jsonl` (not sub-agents'
 * files); Codex: `sessions/YYYY/MM/DD/rollout-…-<thread>.jsonl`. */
async function candidates(
  harness: SearchHarness,
  home: string,
  search: CompiledSearch,
): Promise<Candidate[]> {
  const files: { sid: string; path: string }[] = [];
  if (harness === "claude") {
    const root = join(home, "projects");
    for (const dir of await entries(root))
      for (const name of await entries(join(root, dir))) {
        const sid = name.endsWith(".jsonl") ? name.slice(0, -6) : "";
        if (SID.test(sid)) files.push({ sid, path: join(root, dir, name) });
      }
  } else {
    const root = join(home, "sessions");
    for (const y of await entries(root))
      for (const m of await entries(join(root, y)))
        for (const d of await entries(join(root, y, m)))
          for (const name of await entries(join(root, y, m, d))) {
            const sid =
              name.startsWith("rollout-") && name.endsWith(".jsonl") ? name.slice(-42, -6) : "";
            if (SID.test(sid)) files.push({ sid, path: join(root, y, m, d, name) });
          }
  }
  const out: Candidate[] = [];
  for (const f of files) {
    if (search.sid !== undefined && !f.sid.includes(search.sid)) continue;
    // A symlink out of the tree is no transcript of this home (harness.md §6.1).
    if ((await containmentRefusal(f.path, home, harness)) !== undefined) continue;
    const st = await stat(f.path).catch(() => undefined);
    if (st === undefined || !st.isFile()) continue;
    if (search.modifiedAfter !== undefined && st.mtimeMs < search.modifiedAfter) continue;
    out.push({ ...f, size: st.size, mtime: st.mtimeMs, birth: st.birthtimeMs || st.ctimeMs });
  }
  return out.sort((a, b) => b.mtime - a.mtime);
}

/**
 * Search the config home's transcripts, reporting each matching session to
 * `onHit` as soon as its file is read (so a search ended from outside keeps
 * what it found). Stops at `deadline` (ms since the epoch): `truncated`.
 */
export async function searchTranscripts(
  harness: SearchHarness,
  home: string,
  search: CompiledSearch,
  deadline: number,
  onHit: (hit: FoundSession) => void,
): Promise<{ truncated: boolean }> {
  let hits = 0;
  for (const c of await candidates(harness, home, search)) {
    if (Date.now() >= deadline) return { truncated: true };
    if (hits >= MAX_HITS) return { truncated: true };
    const found = await searchFile(harness, c, search, deadline);
    if (found === "deadline") return { truncated: true };
    if (found !== undefined) {
      hits++;
      onHit(found);
    }
  }
  return { truncated: false };
}

/** What one message-bearing record says. */
export interface Said {
  role: "user" | "agent";
  text: string;
  at?: number;
}

/** What a file tells besides its messages. */
export interface Facts {
  cwd?: string;
  createdAt?: number;
  /** Titles by how much they are trusted: the person's, the harness's, a summary. */
  titles: [string?, string?, string?];
  model?: string;
  effort?: string;
}

/** Lines a reader needs parsed: the kinds that carry messages or facts.
 * Everything else (tool output above all, most of a transcript's bytes) is
 * skipped without parsing when it cannot be one of them. */
const CLAUDE_KINDS = /"type":"(user|assistant|custom-title|ai-title|summary)"/;
const CODEX_KINDS = /"type":"(session_meta|turn_context|user_message|agent_message)"/;

/** A record's messages, its facts noted into `facts`. */
export function recordSaid(
  harness: SearchHarness,
  record: Record<string, unknown>,
  facts: Facts,
): Said[] {
  return harness === "claude" ? claudeRecord(record, facts) : codexRecord(record, facts);
}

/** Whether a session's cwd has every word the search asks for. */
export function cwdMatches(search: CompiledSearch, cwd: string | undefined): boolean {
  if (search.cwdWords.length === 0) return true;
  if (cwd === undefined) return false;
  const lower = cwd.toLowerCase();
  return search.cwdWords.every((w) => lower.includes(w));
}

/**
 * One session's messages against a search, fed in file order: which terms
 * of each clause were found, and the messages that matched one. The walk
 * feeds it what it reads; the search index feeds it what it stored
 * (instance/search/sessions.ts), so both judge a session alike.
 */
export class SessionMatch {
  // Per clause: which terms were found, and the messages that matched a term.
  private readonly found: boolean[][];
  private readonly matched: FoundMatch[][];

  constructor(private readonly search: CompiledSearch) {
    this.found = search.clauses.map((terms) => terms.map(() => false));
    this.matched = search.clauses.map((): FoundMatch[] => []);
  }

  said(s: Said): void {
    const { search } = this;
    if (s.role === "user" ? !search.user : !search.agent) return;
    const lower = search.folded ? s.text.toLowerCase() : s.text;
    search.clauses.forEach((terms, i) => {
      let first = -1;
      terms.forEach((term, j) => {
        const at = term(s.text, lower);
        if (at < 0) return;
        this.found[i]![j] = true;
        if (first < 0) first = at;
      });
      if (first >= 0 && this.matched[i]!.length < MAX_MATCHES)
        this.matched[i]!.push(matchOf(s, first));
    });
  }

  /** The session as a hit, or undefined when no clause is satisfied. */
  result(
    c: { sid: string; path: string; size: number; mtime: number; birth: number },
    facts: Facts,
  ): FoundSession | undefined {
    const hit = this.search.clauses.length === 0 || this.found.some((t) => t.every(Boolean));
    if (!hit) return undefined;
    const matches = this.search.clauses
      .flatMap((_terms, i) => (this.found[i]!.every(Boolean) ? this.matched[i]! : []))
      .sort((a, b) => (a.said_at ?? 0) - (b.said_at ?? 0))
      .slice(0, MAX_MATCHES);
    const out: FoundSession = {
      sid: c.sid,
      file: c.path,
      created_at: Math.round(facts.createdAt ?? c.birth),
      updated_at: Math.round(c.mtime),
      size: c.size,
      matches,
    };
    // Facts kept as JSON (the search index) hold a missing title as null.
    const title = facts.titles.find((t) => typeof t === "string");
    if (facts.cwd !== undefined) out.cwd = facts.cwd;
    if (title !== undefined) out.title = title;
    if (facts.model !== undefined) out.model = facts.model;
    if (facts.effort !== undefined) out.effort = facts.effort;
    return out;
  }
}

async function searchFile(
  harness: SearchHarness,
  c: Candidate,
  search: CompiledSearch,
  deadline: number,
): Promise<FoundSession | undefined | "deadline"> {
  const facts: Facts = { titles: [] };
  const kinds = harness === "claude" ? CLAUDE_KINDS : CODEX_KINDS;
  const match = new SessionMatch(search);
  let cwdChecked = false;
  try {
    for await (const batch of readLines(c.path, 0, { until: c.size, parse: false })) {
      if (Date.now() >= deadline) return "deadline";
      for (const line of batch) {
        if (line.oversized || !kinds.test(line.text)) continue;
        const record = parseRecord(line.text);
        if (record === undefined) continue;
        const said = recordSaid(harness, record, facts);
        if (!cwdChecked && facts.cwd !== undefined) {
          cwdChecked = true;
          if (!cwdMatches(search, facts.cwd)) return undefined;
        }
        for (const s of said) match.said(s);
      }
    }
  } catch {
    // Gone or unreadable since the walk listed it: not a session to report.
    return undefined;
  }
  if (!cwdChecked && search.cwdWords.length > 0) return undefined;
  return match.result(c, facts);
}

/** A message as a match: the text around where the match starts. */
function matchOf(s: Said, at: number): FoundMatch {
  let text = s.text;
  if (text.length > MAX_MATCH_CHARS) {
    const start = Math.max(0, Math.min(at - 80, text.length - MAX_MATCH_CHARS));
    text = `${start > 0 ? "…" : ""}${text.slice(start, start + MAX_MATCH_CHARS)}${start + MAX_MATCH_CHARS < text.length ? "…" : ""}`;
  }
  const m: FoundMatch = { role: s.role, text };
  if (s.at !== undefined) m.said_at = s.at;
  return m;
}

const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
const obj = (v: unknown) =>
  typeof v === "object" && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;

function time(v: unknown): number | undefined {
  const t = typeof v === "string" ? Date.parse(v) : Number.NaN;
  return Number.isFinite(t) && t >= 0 ? t : undefined;
}

/** Text blocks of a Claude Code message's content (tool results, tool
 * calls, thinking and images are not text said). */
function texts(content: unknown): string[] {
  if (typeof content === "string") return content === "" ? [] : [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((b) => {
    const block = obj(b);
    const text = block?.type === "text" ? str(block.text) : undefined;
    return text === undefined ? [] : [text];
  });
}

/** A Claude Code record (harness.md §6.2): its facts into `facts`, its messages out. */
function claudeRecord(r: Record<string, unknown>, facts: Facts): Said[] {
  facts.cwd ??= str(r.cwd);
  facts.createdAt ??= time(r.timestamp);
  switch (r.type) {
    case "custom-title":
      facts.titles[0] = str(r.customTitle) ?? facts.titles[0];
      return [];
    case "ai-title":
      facts.titles[1] = str(r.aiTitle) ?? facts.titles[1];
      return [];
    case "summary":
      facts.titles[2] = str(r.summary) ?? facts.titles[2];
      return [];
    case "user":
    case "assistant": {
      // Harness-injected text and sub-agent work are not the session's dialogue.
      if (r.isMeta === true || r.isSidechain === true) return [];
      const message = obj(r.message);
      const role = r.type === "user" ? "user" : "agent";
      if (role === "agent") {
        const model = str(message?.model);
        if (model !== undefined && model !== "<synthetic>") facts.model = model;
      }
      const at = time(r.timestamp);
      // A message another session sent in (contract §7.5) is neither the
      // person's nor this agent's, however the harness wrapped it.
      if (role === "user" && obj(r.origin)?.kind === "peer") return [];
      return texts(message?.content)
        .filter(
          (text) =>
            role === "agent" ||
            !(text.startsWith("<cross-session-message") || peerMessage(text, true) !== undefined),
        )
        .map((text) => ({ role, text, at }));
    }
    default:
      return [];
  }
}

/** A Codex rollout record (harness.md §6.1): what the person typed and the
 * agent answered are `event_msg` user_message / agent_message (the
 * `response_item` copies carry injected context as well). */
function codexRecord(r: Record<string, unknown>, facts: Facts): Said[] {
  const p = obj(r.payload);
  if (p === undefined) return [];
  const at = time(r.timestamp);
  switch (r.type) {
    case "session_meta":
      facts.cwd ??= str(p.cwd);
      facts.createdAt ??= time(p.timestamp) ?? at;
      return [];
    case "turn_context":
      facts.cwd ??= str(p.cwd);
      facts.model = str(p.model) ?? facts.model;
      facts.effort = str(p.effort) ?? facts.effort;
      return [];
    case "event_msg": {
      const text = str(p.message);
      if (text === undefined) return [];
      if (p.type === "user_message") return [{ role: "user", text, at }];
      if (p.type === "agent_message") return [{ role: "agent", text, at }];
      return [];
    }
    default:
      return [];
  }
}

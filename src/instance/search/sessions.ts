import { statSync } from "node:fs";
import {
  type CompiledSearch,
  cwdMatches,
  type Facts,
  type FoundSession,
  MAX_HITS,
  SessionMatch,
} from "../../harness/transcript-search.js";
import type { Db } from "../../store/database.js";
import { typeTags } from "../../store/search-index.js";

// `session_search` answered from the search index (DR-0037) instead of a
// walk over every transcript. The clause rules stay the walk's own
// (`SessionMatch`): clauses ORed, a clause's terms ANDed across the session's
// messages, case as asked. The index only narrows which sessions to judge —
// those whose person's or agent's messages hold a word starting with each
// term — and the judging reads the messages the index stored. So a term is
// found where a word starts with it (`claim` in "claims", not in
// "reclaim"); a regular expression, or a term with no letter or digit, is
// left to the walk.

const PERSON = "message:user:in";
const AGENT = "message:user:out";

/** The FTS5 phrase finding words that start like `term`, or undefined when
 * the term has no word in it (the index cannot narrow by it). */
function termPhrase(term: string): string | undefined {
  if (!/[\p{L}\p{N}]/u.test(term)) return undefined;
  return `"${term.replaceAll('"', '""')}"*`;
}

/** Whether the index can answer this search (else: the walk). */
export function indexable(request: { query?: string; regex?: boolean }): boolean {
  if (request.regex === true) return false;
  return (request.query ?? "")
    .split(/\s+/)
    .filter((w) => w !== "")
    .every((w) => termPhrase(w) !== undefined);
}

interface FileFacts {
  id: number;
  path: string;
  sid: string;
  facts: string;
}

/**
 * The sessions matching a search, from the index; `terms` are the query's
 * clauses as words (the compiled search holds them as functions). Stops at
 * `deadline` (ms since the epoch) with `truncated`.
 */
export function indexedSessions(
  db: Db,
  search: CompiledSearch,
  terms: string[][],
  deadline: number,
): { hits: FoundSession[]; truncated: boolean } {
  const types = [...(search.user ? [PERSON] : []), ...(search.agent ? [AGENT] : [])];
  if (types.length === 0 && terms.length > 0) return { hits: [], truncated: false };
  let files = (
    db.prepare("SELECT id, path, sid, facts FROM files WHERE agent_id IS NULL").all() as FileFacts[]
  ).filter((f) => search.sid === undefined || f.sid.includes(search.sid));
  if (terms.length > 0) {
    const wanted = candidates(db, types, terms);
    files = files.filter((f) => wanted.has(f.id));
  }
  const found: { f: FileFacts; facts: Facts; size: number; mtime: number; birth: number }[] = [];
  for (const f of files) {
    const facts = JSON.parse(f.facts) as Facts;
    if (!cwdMatches(search, facts.cwd)) continue;
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(f.path);
    } catch {
      // Gone since it was indexed: the walk would not list it either.
      continue;
    }
    if (search.modifiedAfter !== undefined && st.mtimeMs < search.modifiedAfter) continue;
    found.push({ f, facts, size: st.size, mtime: st.mtimeMs, birth: st.birthtimeMs || st.ctimeMs });
  }
  found.sort((a, b) => b.mtime - a.mtime);
  const said = db.prepare(
    `SELECT d.type, d.at, t.text FROM docs d JOIN texts t ON t.id = d.id
     WHERE d.file = ? AND d.type IN ('${PERSON}', '${AGENT}') ORDER BY d.id`,
  );
  const hits: FoundSession[] = [];
  for (const { f, facts, size, mtime, birth } of found) {
    if (Date.now() >= deadline || hits.length >= MAX_HITS) return { hits, truncated: true };
    const match = new SessionMatch(search);
    if (terms.length > 0)
      for (const row of said.iterate(f.id) as IterableIterator<{
        type: string;
        at: number;
        text: string;
      }>)
        match.said({ role: row.type === PERSON ? "user" : "agent", text: row.text, at: row.at });
    const hit = match.result({ sid: f.sid, path: f.path, size, mtime, birth }, facts);
    if (hit !== undefined) hits.push(hit);
  }
  return { hits, truncated: false };
}

/** Files where some clause has every term in a message of the wanted kinds. */
function candidates(db: Db, types: string[], terms: string[][]): Set<number> {
  const kinds = types.map((t) => `"${typeTags(t).at(-1)}"`).join(" OR ");
  const filesOf = db.prepare(
    `SELECT DISTINCT d.file AS file FROM fts JOIN docs d ON d.id = fts.rowid
     WHERE fts MATCH ? AND d.agent_id IS NULL AND d.file IS NOT NULL`,
  );
  const out = new Set<number>();
  for (const clause of terms) {
    let inClause: Set<number> | undefined;
    for (const term of clause) {
      const match = `text : (${termPhrase(term)}) AND tags : (${kinds})`;
      const files = new Set(
        (filesOf.all(match) as { file: number }[])
          .map((r) => r.file)
          .filter((f) => inClause === undefined || inClause.has(f)),
      );
      inClause = files;
      if (files.size === 0) break;
    }
    for (const f of inClause ?? []) out.add(f);
  }
  return out;
}

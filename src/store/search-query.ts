import { contractError } from "../contract/errors.js";
import type { SearchAnswer, SearchHit } from "../contract/search.js";
import type { Db } from "./database.js";
import { FTS_TOKENIZER, sidTag, tagsOf, typeTags } from "./search-index.js";

// Queries over the search index (DR-0037). A query is a search box's text:
// words, "quoted phrases", a `*` after a word for a prefix, AND / OR / NOT
// (upper case) and parentheses. Every word is handed to FTS5 quoted, so no
// character a person types — a path, `-`, `:`, a quote inside a word — is
// read as FTS5 syntax or names a column; what is left for FTS5 to judge
// (an operator with nothing beside it) comes back as `invalid_args`.

/** What a search asks. */
export interface SearchArgs {
  q: string;
  /** A session (or a prefix of its id): its items, and messages from or to it. */
  sid?: string;
  /** ms since the epoch: only what happened at or after it. */
  since?: number;
  /** An item type, or a prefix of whole segments (`tool`, `message:user`). */
  type?: string;
  limit?: number;
}

export const MAX_QUERY_CHARS = 1024;
const MAX_QUERY_TERMS = 64;
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 200;
/** Matches ranked per query: the newest this many (by index order, which
 * follows arrival). Finding them costs about the same for a rare word and a
 * word in every item; ranking every match of the latter would not (DR-0037). */
export const RANK_WINDOW = 1000;
/** Words of context a snippet shows. */
const SNIPPET_TOKENS = 24;
const OPEN = "\u0001";
const CLOSE = "\u0002";

const WORD_CHAR = /[\p{L}\p{N}]/u;
const WORDS = /[\p{L}\p{N}\p{Co}]+/gu;
const quote = (s: string) => `"${s.replaceAll('"', '""')}"`;

/** A query as FTS5 reads it: `exact` finds the matches; `words` ranks
 * them — each phrase as its words ANDed, a prefix as the word it is. BM25
 * first counts the rows holding each phrase over the whole index: for a
 * phrase of common words, or a short prefix (the lists of every word it
 * starts), that alone costs tens of milliseconds, while a word's own list
 * is read in a few (DR-0037). */
export interface CompiledQuery {
  exact: string;
  words: string;
  /** `exact` in pieces, its prefix terms apart: a snippet of a row is made
   * with each prefix replaced by the words of that row it starts (FTS5
   * would otherwise look up every word of the index with that prefix, for
   * every snippet). */
  pieces: (string | { prefix: string })[];
}

/**
 * The FTS5 expressions for a person's query: every word and phrase quoted,
 * operators and parentheses passed on. Throws `invalid_args` for what is
 * wrong before FTS5 sees it (an unclosed quote or parenthesis, nothing to
 * search for, too long).
 */
export function compileQuery(query: string): CompiledQuery {
  if (query.length > MAX_QUERY_CHARS)
    throw contractError("invalid_args", `query: at most ${MAX_QUERY_CHARS} characters`);
  // FTS5 ends a string at a NUL: control characters are spaces here.
  const q = query.replace(/\p{Cc}/gu, " ");
  const exact: string[] = [];
  const relaxed: string[] = [];
  const pieces: CompiledQuery["pieces"] = [];
  let depth = 0;
  let terms = 0;
  let words = 0;
  const term = (text: string, prefix: boolean) => {
    if (++terms > MAX_QUERY_TERMS)
      throw contractError("invalid_args", `query: at most ${MAX_QUERY_TERMS} terms`);
    if (WORD_CHAR.test(text)) words++;
    next(true, true);
    exact.push(`${quote(text)}${prefix ? "*" : ""}`);
    pieces.push(prefix ? { prefix: text } : quote(text));
    const parts = text.match(WORDS) ?? [];
    relaxed.push(parts.length <= 1 ? quote(text) : `(${parts.map((w) => quote(w)).join(" AND ")})`);
  };
  const operator = (op: string) => {
    exact.push(op);
    relaxed.push(op);
    pieces.push(op);
  };
  // FTS5 reads two terms side by side as ANDed, but not a term beside a
  // parenthesis: the AND is written out wherever one operand follows another.
  let operand = false;
  const next = (starts: boolean, ends: boolean) => {
    if (starts && operand) operator("AND");
    operand = ends;
  };
  for (let i = 0; i < q.length; ) {
    const c = q[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === "(" || c === ")") {
      depth += c === "(" ? 1 : -1;
      if (depth < 0) throw contractError("invalid_args", "query: a ) without its (");
      next(c === "(", c === ")");
      operator(c);
      i++;
    } else if (c === '"') {
      const end = q.indexOf('"', i + 1);
      if (end < 0) throw contractError("invalid_args", 'query: a " without its closing "');
      const prefix = q[end + 1] === "*";
      term(q.slice(i + 1, end), prefix);
      i = end + (prefix ? 2 : 1);
    } else {
      let end = i;
      while (end < q.length && !/[\s()"]/.test(q[end]!)) end++;
      const word = q.slice(i, end);
      i = end;
      if (word === "AND" || word === "OR" || word === "NOT") {
        next(false, false);
        operator(word);
        continue;
      }
      const prefix = word.length > 1 && word.endsWith("*");
      term(prefix ? word.slice(0, -1) : word, prefix);
    }
  }
  if (depth > 0) throw contractError("invalid_args", "query: a ( without its )");
  if (words === 0)
    throw contractError("invalid_args", "query: nothing to search for (give at least one word)");
  return { exact: exact.join(" "), words: relaxed.join(" "), pieces };
}

/** A session filter as its tag: a whole sid, or a prefix of one. */
function sidFilter(sid: string): string {
  const hex = sid.toLowerCase().replaceAll("-", "");
  if (!/^[0-9a-f]{1,32}$/.test(hex))
    throw contractError("invalid_args", `sid: not a session id or a prefix of one: ${sid}`);
  const tag = sidTag(hex);
  return hex.length === 32 ? quote(tag) : `${quote(tag)}*`;
}

/** The filters as tag phrases ANDed to the query's. */
function tagFilters(args: SearchArgs): string {
  let out = "";
  if (args.sid !== undefined) out += ` AND tags : ${sidFilter(args.sid)}`;
  if (args.type !== undefined) {
    const tags = typeTags(args.type);
    if (args.type === "" || tags.at(-1) === "y")
      throw contractError("invalid_args", `type: not an item type: ${args.type}`);
    out += ` AND tags : ${quote(tags.at(-1)!)}`;
  }
  return out;
}

/** FTS5's complaint about a query, as the caller's mistake. */
function asQueryError(error: unknown): unknown {
  const msg = (error as Error)?.message ?? "";
  if (msg.startsWith("fts5:"))
    return contractError("invalid_args", `query: ${msg.slice(5).trim()}`, { cause: error });
  return error;
}

interface Doc {
  sid: string;
  agent_id: string | null;
  item: string;
  type: string;
  at: number;
  peer: string | null;
  file: number | null;
  text: string;
}

/** A scratch FTS5 table of the connection's own (`temp`, so a read-only
 * connection may write it): `fts` keeps no text, so a hit's snippet is made
 * here, from its row put back as it was indexed — its text from `texts`, its
 * tags from `docs` — under the same rowid and matched by the same query.
 * A snippet reads only its own row's words and where the phrases fall in
 * them, so it comes out as `fts` would have made it. */
class Snippets {
  private readonly put;
  private readonly take;
  private readonly snippet;

  constructor(db: Db) {
    db.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS temp.snip USING fts5 (text, tags, tokenize = '${FTS_TOKENIZER}')`,
    );
    this.put = db.prepare("INSERT INTO temp.snip (rowid, text, tags) VALUES (?, ?, ?)");
    this.take = db.prepare("DELETE FROM temp.snip");
    this.snippet = db
      .prepare(
        `SELECT snippet(snip, 0, '${OPEN}', '${CLOSE}', '…', ${SNIPPET_TOKENS})
         FROM temp.snip WHERE snip MATCH ? AND rowid = ?`,
      )
      .pluck();
  }

  of(id: number, doc: Doc, match: string): string {
    const rowid = BigInt(id);
    this.put.run(
      rowid,
      doc.text,
      tagsOf({ sid: doc.sid, type: doc.type, peer: doc.peer ?? undefined }),
    );
    try {
      return (this.snippet.get(match, rowid) as string | undefined) ?? "";
    } finally {
      this.take.run();
    }
  }
}

const scratch = new WeakMap<Db, Snippets>();

function scratchOf(db: Db): Snippets {
  let s = scratch.get(db);
  if (s === undefined) {
    s = new Snippets(db);
    scratch.set(db, s);
  }
  return s;
}

/**
 * Search: the newest `RANK_WINDOW` matches that pass the filters, ranked by
 * BM25 (the text only), the best `limit` of them with a snippet each.
 *
 * Rowids are bound as BigInt throughout: better-sqlite3 binds a number as a
 * REAL, and FTS5 reads a REAL rowid bound as no bound at all.
 */
export function runSearch(db: Db, args: SearchArgs): SearchAnswer {
  const limit = Math.max(1, Math.min(MAX_LIMIT, Math.trunc(args.limit ?? DEFAULT_LIMIT)));
  const query = compileQuery(args.q);
  const filters = tagFilters(args);
  const exact = `text : (${query.exact})${filters}`;
  const indexing = !indexCaughtUp(db);
  // Rows at or after `since` all lie above the first of them.
  let from = 0;
  if (args.since !== undefined) {
    const first = db.prepare("SELECT min(id) AS id FROM docs WHERE at >= ?").get(args.since) as {
      id: number | null;
    };
    if (first.id === null) return { hits: [], more: false, indexing };
    from = first.id;
  }
  const where = ["fts MATCH ?", "fts.rowid >= ?"];
  const params: unknown[] = [exact, BigInt(from)];
  if (args.since !== undefined) {
    where.push("d.at >= ?");
    params.push(args.since);
  }
  if (args.type !== undefined) {
    const type = args.type.toLowerCase();
    where.push("(lower(d.type) = ? OR substr(lower(d.type), 1, ?) = ?)");
    params.push(type, type.length + 1, `${type}:`);
  }
  const join = where.length > 2 ? "JOIN docs d ON d.id = fts.rowid" : "";
  let ids: number[];
  const scores = new Map<number, number>();
  try {
    ids = db
      .prepare(
        `SELECT fts.rowid FROM fts ${join} WHERE ${where.join(" AND ")}
         ORDER BY fts.rowid DESC LIMIT ${RANK_WINDOW}`,
      )
      .pluck()
      .all(...params) as number[];
    if (ids.length === 0) return { hits: [], more: false, indexing };
    const scored = db
      .prepare(
        `SELECT rowid AS id, -bm25(fts, 1.0, 0.0) AS score FROM fts
         WHERE fts MATCH ? AND rowid >= ? AND rowid <= ?`,
      )
      .all(`text : (${query.words})${filters}`, BigInt(ids.at(-1)!), BigInt(ids[0]!)) as {
      id: number;
      score: number;
    }[];
    for (const { id, score } of scored) scores.set(id, score);
  } catch (error) {
    throw asQueryError(error);
  }
  const best = ids
    .map((id) => ({ id, score: scores.get(id) ?? 0 }))
    .sort((a, b) => b.score - a.score || b.id - a.id)
    .slice(0, limit);
  const prefixed = query.pieces.some((p) => typeof p !== "string");
  const docOf = db.prepare(
    `SELECT s.name AS sid, d.agent_id, coalesce(o.name || '/' || d.item, d.item) AS item, d.type,
       d.at, p.name AS peer, d.file, t.text
     FROM docs d JOIN names s ON s.id = d.sid LEFT JOIN names p ON p.id = d.peer
     LEFT JOIN names o ON o.id = d.origin JOIN texts t ON t.id = d.id WHERE d.id = ?`,
  );
  const snippets = scratchOf(db);
  const hits = best.map((c) => {
    const doc = docOf.get(BigInt(c.id)) as Doc;
    const match = prefixed ? `text : (${expandPrefixes(query.pieces, doc.text)})` : exact;
    let raw = "";
    try {
      raw = snippets.of(c.id, doc, match);
    } catch {
      // An expansion FTS5 refuses (none should be): the hit without its snippet.
    }
    const hit: SearchHit = {
      sid: doc.sid,
      type: doc.type,
      at: doc.at,
      ...highlighted(raw),
      rank: Math.round(c.score * 1000) / 1000,
    };
    if (doc.agent_id !== null) hit.agent_id = doc.agent_id;
    if (doc.file === null && doc.type === "message") hit.mid = doc.item;
    else if (doc.file !== null) hit.item = doc.item;
    if (doc.peer !== null) hit.from = doc.peer;
    return hit;
  });
  return { hits, more: ids.length > limit, indexing };
}

/** Whether the index has read every source once (its writer says so). */
export function indexCaughtUp(db: Db): boolean {
  const row = db.prepare("SELECT value FROM meta WHERE key = 'caught_up'").get() as
    | { value: string }
    | undefined;
  return row?.value === "1";
}

/** Expansions of one prefix at most (a row's distinct words it starts). */
const MAX_EXPANSIONS = 32;

/** Fold a word as FTS5's tokenizer does: case, and diacritics removed. */
function fold(word: string): string {
  const lower = word.toLowerCase();
  return /^[\u0000-\u007f]*$/.test(lower) ? lower : lower.normalize("NFD").replace(/\p{M}+/gu, "");
}

/** The query with each prefix term replaced by the words of `text` it
 * starts (as phrases with the term's other words); a prefix with none in
 * the text stays as it is. */
function expandPrefixes(pieces: CompiledQuery["pieces"], text: string): string {
  let words: Set<string> | undefined;
  return pieces
    .map((p) => {
      if (typeof p === "string") return p;
      const parts = p.prefix.match(WORDS) ?? [];
      const last = fold(parts.at(-1) ?? "");
      if (last === "") return `${quote(p.prefix)}*`;
      words ??= new Set(text.match(WORDS) ?? []);
      const head = parts.slice(0, -1).join(" ");
      const found = new Set<string>();
      for (const w of words) {
        if (w.length >= last.length && fold(w).startsWith(last)) found.add(fold(w));
        if (found.size >= MAX_EXPANSIONS) break;
      }
      if (found.size === 0) return `${quote(p.prefix)}*`;
      return `(${[...found].map((w) => quote(head === "" ? w : `${head} ${w}`)).join(" OR ")})`;
    })
    .join(" ");
}

/** A snippet with its markers taken out and their places kept. */
function highlighted(raw: string): { snippet: string; highlights: [number, number][] } {
  let snippet = "";
  const highlights: [number, number][] = [];
  let start = -1;
  for (const ch of raw) {
    if (ch === OPEN) start = snippet.length;
    else if (ch === CLOSE) {
      if (start >= 0) highlights.push([start, snippet.length]);
      start = -1;
    } else snippet += ch;
  }
  return { snippet, highlights };
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A `since` as a person writes it: a duration back from now (`30m`, `2h`,
 * `7d`, `45s`), a date or date-time (`2026-11-30`, `2026-11-30T10:00Z`), or
 * milliseconds since the epoch. Throws `invalid_args` for anything else.
 */
export function parseSince(text: string, now: number): number {
  const t = text.trim();
  const ago = /^(\d+)([smhd])$/.exec(t);
  if (ago !== null) return now - Number(ago[1]) * UNIT_MS[ago[2]!]!;
  if (/^\d{10,}$/.test(t)) return Number(t);
  if (/^\d{4}-\d{2}-\d{2}/.test(t)) {
    const at = Date.parse(t);
    if (Number.isFinite(at)) return at;
  }
  throw contractError(
    "invalid_args",
    `since: not a time: ${text} (a duration back from now like 30m, 2h, 7d; a date like 2026-11-30; or ms since the epoch)`,
  );
}

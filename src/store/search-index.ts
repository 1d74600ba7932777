import { rmSync } from "node:fs";
import { type Db, isDamagedError, openDatabase } from "./database.js";

// The search index (DR-0037): its own SQLite file beside the instance's store
// (`<state dir>/search.db`), so a large index never slows the store's group
// commit, and so losing it loses nothing — everything in it is rebuilt from
// the transcripts and the store's messages. One writer (the index worker);
// readers open it read-only (the query worker, `ccmsg search`).
//
// `docs` holds one row per indexed thing — a typed transcript item, a
// message, a notification — and `texts` its words; `fts` is a contentless
// FTS5 index of them (DR-0061): it keeps only the index, so the words are
// stored once, in `texts`, and a snippet is made from there (search-query.ts).
// `docs` and `texts` are apart so that `docs` stays dense — a filter on its
// columns reads few pages however long the texts are; its sessions and
// senders are numbers into `names` (a sid is 36 characters, on every row), and
// so is a mid's instance (`origin`; the mid's counter is the item, DR-0063).
// Besides the words, `fts` indexes a few tag words per row (whose session,
// which type) so that a filter by session or type is part of the full-text
// match, not a scan of its results; they are derived from `docs`, never
// stored. `files` remembers per transcript how far it was indexed and
// the classifier's state there; `calls` which tool each call of a file used
// (what a later result is classified by).

/** Bump when the schema changes, or what the classifiers make of a record
 * (its rows keep their type and words): an index of another version is
 * deleted and rebuilt, never migrated — it holds nothing the sources do not.
 * 2: Claude Code's peer messages are `message:session:in` (issue 25).
 * 3: a ccmsg send is `message:session:out` only at its call's result, once
 * the call came back done (DR-0057).
 * 4: `fts` contentless, tags not stored, sids as numbers, no index of mids
 * (DR-0061).
 * 5: a message's mid as its instance (a number into `names`) and its counter
 * (DR-0063). */
export const SEARCH_INDEX_VERSION = 5;

/** How `fts` splits words (a snippet's scratch table splits them alike). */
export const FTS_TOKENIZER = "unicode61 remove_diacritics 2";

const SCHEMA = `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    sid TEXT NOT NULL,
    agent_id TEXT,
    -- dev:ino of the file indexed; another one at the path is read afresh
    identity TEXT NOT NULL,
    -- complete lines up to here are indexed
    offset INTEGER NOT NULL,
    -- the classifier's state before the line at offset (JSON)
    state TEXT NOT NULL,
    -- what the file tells about its session: cwd, titles, model (JSON)
    facts TEXT NOT NULL
  );
  CREATE INDEX files_sid ON files (sid);
  CREATE TABLE calls (
    file INTEGER NOT NULL,
    tool_use_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    offset INTEGER NOT NULL,
    PRIMARY KEY (file, tool_use_id)
  ) WITHOUT ROWID;
  -- the sessions and senders of docs (a sid, or \`user\`), and mids' instances
  CREATE TABLE names (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
  CREATE TABLE docs (
    id INTEGER PRIMARY KEY,
    -- the transcript it came from; NULL for messages and notifications
    file INTEGER,
    -- names.id
    sid INTEGER NOT NULL,
    agent_id TEXT,
    -- the item id, or a mid's counter
    item TEXT NOT NULL,
    -- a mid's instance (names.id): the mid is <origin>/<item>
    origin INTEGER,
    type TEXT NOT NULL,
    at INTEGER NOT NULL,
    -- a message's sender (names.id)
    peer INTEGER
  );
  CREATE INDEX docs_file ON docs (file, type) WHERE file IS NOT NULL;
  CREATE INDEX docs_at ON docs (at);
  CREATE TABLE texts (id INTEGER PRIMARY KEY, text TEXT NOT NULL);
  CREATE VIRTUAL TABLE fts USING fts5 (
    text, tags,
    content = '', contentless_delete = 1,
    tokenize = '${FTS_TOKENIZER}'
  );
`;

/** Remove the index's files (the database and its WAL sidecars). */
export function removeSearchIndex(path: string): void {
  for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
}

/**
 * Open the index for writing, creating it when missing. A file of another
 * version, or a damaged one, is deleted and started afresh (`fresh` says so):
 * the caller rebuilds it from the sources. A new index that cannot be written
 * (a full disk) fails with nothing left open. `maxPageCount` is a test hook:
 * the file may not grow past it, as on a full disk.
 */
export function openSearchIndex(
  path: string,
  options: { maxPageCount?: number } = {},
): { db: Db; fresh: boolean } {
  const open = () => {
    const opened = openDatabase(path);
    if (options.maxPageCount !== undefined)
      opened.pragma(`max_page_count = ${options.maxPageCount}`);
    return opened;
  };
  let db: Db;
  try {
    db = open();
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version === SEARCH_INDEX_VERSION) return { db, fresh: false };
    const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master").get() as { n: number };
    if (tables.n > 0) {
      db.close();
      removeSearchIndex(path);
      db = open();
    }
  } catch (error) {
    if (!isDamagedError(error) && !isDamagedError((error as { cause?: unknown }).cause))
      throw error;
    removeSearchIndex(path);
    db = open();
  }
  try {
    db.transaction(() => {
      db.exec(SCHEMA);
      db.pragma(`user_version = ${SEARCH_INDEX_VERSION}`);
    }).immediate();
  } catch (error) {
    db.close();
    throw error;
  }
  return { db, fresh: true };
}

/** Open the index read-only; undefined when there is none (yet) or it is not
 * of this version. */
export function openSearchReader(path: string): Db | undefined {
  let db: Db;
  try {
    db = openDatabase(path, { readonly: true });
  } catch {
    return undefined;
  }
  if ((db.pragma("user_version", { simple: true }) as number) !== SEARCH_INDEX_VERSION) {
    db.close();
    return undefined;
  }
  return db;
}

/** One row to index. */
export interface DocRow {
  /** The transcript's `files.id`; absent for messages and notifications. */
  file?: number;
  sid: string;
  agentId?: string;
  item: string;
  type: string;
  at: number;
  peer?: string;
  text: string;
}

/** A transcript's row in `files`. */
export interface FileRow {
  id: number;
  path: string;
  sid: string;
  agent_id: string | null;
  identity: string;
  offset: number;
  state: string;
  facts: string;
}

/** The tag word of a session: `s` and its hex digits. */
export function sidTag(sid: string): string {
  return `s${sid.replaceAll("-", "").toLowerCase()}`;
}

/** The tag words of a type, one per level: `tool:Bash` → `ytool ytoolbash`. */
export function typeTags(type: string): string[] {
  const out: string[] = [];
  let acc = "y";
  for (const segment of type.toLowerCase().split(":")) {
    acc += segment.replace(/[^a-z0-9]/g, "");
    out.push(acc);
  }
  return out;
}

const SID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The tag words `fts` indexes for a row (search-query.ts makes them again
 * for a snippet's scratch row). */
export function tagsOf(row: { sid: string; type: string; peer?: string | undefined }): string {
  const tags = [sidTag(row.sid), ...typeTags(row.type)];
  if (row.peer !== undefined && SID_RE.test(row.peer)) tags.push(sidTag(row.peer));
  return tags.join(" ");
}

/**
 * The index's one writer (the index worker). Every method is synchronous
 * and small; the caller groups them into transactions (`batch`).
 */
export class SearchWriter {
  private readonly sql;

  constructor(readonly db: Db) {
    const s = (text: string) => db.prepare(text);
    this.sql = {
      doc: s(
        "INSERT INTO docs (file, sid, agent_id, item, origin, type, at, peer) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      ),
      text: s("INSERT INTO texts (id, text) VALUES (?, ?)"),
      name: s("SELECT id FROM names WHERE name = ?").pluck(),
      addName: s("INSERT INTO names (name) VALUES (?) RETURNING id").pluck(),
      // A mid's time is its message's: found by docs_at, no index of mids.
      hasMid: s(
        "SELECT 1 FROM docs WHERE at = ? AND type = 'message' AND item = ? AND origin IS ?",
      ),
      fts: s("INSERT INTO fts (rowid, text, tags) VALUES (?, ?, ?)"),
      unindexFile: s("DELETE FROM fts WHERE rowid IN (SELECT id FROM docs WHERE file = ?)"),
      dropTexts: s("DELETE FROM texts WHERE id IN (SELECT id FROM docs WHERE file = ?)"),
      dropDocs: s("DELETE FROM docs WHERE file = ?"),
      dropCalls: s("DELETE FROM calls WHERE file = ?"),
      file: s("SELECT * FROM files WHERE path = ?"),
      files: s("SELECT * FROM files"),
      addFile: s(
        "INSERT INTO files (path, sid, agent_id, identity, offset, state, facts) VALUES (?, ?, ?, ?, 0, ?, ?) RETURNING *",
      ),
      restart: s("UPDATE files SET identity = ?, offset = 0, state = ?, facts = ? WHERE id = ?"),
      progress: s("UPDATE files SET offset = ?, state = ?, facts = ? WHERE id = ?"),
      call: s("SELECT tool, offset FROM calls WHERE file = ? AND tool_use_id = ?"),
      noteCall: s(
        "INSERT OR IGNORE INTO calls (file, tool_use_id, tool, offset) VALUES (?, ?, ?, ?)",
      ),
      meta: s("SELECT value FROM meta WHERE key = ?"),
      setMeta: s(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      ),
      merge: s("INSERT INTO fts (fts, rank) VALUES ('merge', ?)"),
      changes: s("SELECT total_changes()").pluck(),
    };
  }

  /** names.id by name, as committed (a failed batch forgets its own). */
  private readonly names = new Map<string, number | bigint>();

  /** Run `fn` in one write transaction. */
  batch<T>(fn: () => T): T {
    try {
      return this.db.transaction(fn).immediate();
    } catch (error) {
      this.names.clear();
      throw error;
    }
  }

  private nameId(name: string): number | bigint {
    let id = this.names.get(name);
    if (id === undefined) {
      id = (this.sql.name.get(name) ?? this.sql.addName.get(name)) as number | bigint;
      this.names.set(name, id);
    }
    return id;
  }

  /** Index one row; a message already indexed (by mid) is skipped. */
  add(row: DocRow): void {
    // A mid's instance is the same on every message: a number, not 32 characters.
    const slash = row.type === "message" ? row.item.lastIndexOf("/") : -1;
    const origin = slash > 0 ? this.nameId(row.item.slice(0, slash)) : null;
    const item = slash > 0 ? row.item.slice(slash + 1) : row.item;
    if (row.type === "message" && this.sql.hasMid.get(row.at, item, origin) !== undefined) return;
    const tags = tagsOf(row);
    const { lastInsertRowid } = this.sql.doc.run(
      row.file ?? null,
      this.nameId(row.sid),
      row.agentId ?? null,
      item,
      origin,
      row.type,
      row.at,
      row.peer === undefined ? null : this.nameId(row.peer),
    );
    this.sql.text.run(lastInsertRowid, row.text);
    this.sql.fts.run(lastInsertRowid, row.text, tags);
  }

  files(): FileRow[] {
    return this.sql.files.all() as FileRow[];
  }

  file(path: string): FileRow | undefined {
    return this.sql.file.get(path) as FileRow | undefined;
  }

  addFile(
    f: { path: string; sid: string; agentId?: string },
    identity: string,
    state: string,
    facts: string,
  ): FileRow {
    return this.sql.addFile.get(
      f.path,
      f.sid,
      f.agentId ?? null,
      identity,
      state,
      facts,
    ) as FileRow;
  }

  /** Forget what a file gave (it was replaced or shortened): it is read
   * again from its start. */
  restartFile(id: number, identity: string, state: string, facts: string): void {
    this.sql.unindexFile.run(id);
    this.sql.dropTexts.run(id);
    this.sql.dropDocs.run(id);
    this.sql.dropCalls.run(id);
    this.sql.restart.run(identity, state, facts, id);
  }

  progress(id: number, offset: number, state: string, facts: string): void {
    this.sql.progress.run(offset, state, facts, id);
  }

  callOf(file: number, toolUseId: string): { tool: string; offset: number } | undefined {
    return this.sql.call.get(file, toolUseId) as { tool: string; offset: number } | undefined;
  }

  noteCall(file: number, toolUseId: string, tool: string, offset: number): void {
    this.sql.noteCall.run(file, toolUseId, tool, offset);
  }

  meta(key: string): string | undefined {
    return (this.sql.meta.get(key) as { value: string } | undefined)?.value;
  }

  setMeta(key: string, value: string): void {
    this.sql.setMeta.run(key, value);
  }

  /** One step of FTS5's incremental merge (about `pages` pages of work; a
   * negative count merges toward a single segment); false once there was
   * nothing left to merge (FTS5's own test: fewer than two changes). */
  merge(pages: number): boolean {
    const before = this.sql.changes.get() as number;
    this.sql.merge.run(pages);
    return (this.sql.changes.get() as number) - before >= 2;
  }
}

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { ContractError } from "../../src/contract/errors.js";
import {
  type DocRow,
  openSearchIndex,
  openSearchReader,
  SearchWriter,
} from "../../src/store/search-index.js";
import {
  compileQuery,
  parseSince,
  runSearch,
  type SearchArgs,
} from "../../src/store/search-query.js";

// The search index's file and its queries (DR-0037): what a person types is
// always their words, never FTS5 syntax they did not mean; a query FTS5
// cannot read is `invalid_args`; filters by session, type and time; a
// snippet with the matched words marked.

const tmp = mkdtempSync(join(tmpdir(), "ccmsg-fts-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;

const A = "3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d";
const B = "8b2d4e6f-1a3c-4d5e-8f70-9a1b2c3d4e5f";

function index(rows: DocRow[] = []): { path: string; writer: SearchWriter } {
  const path = join(tmp, `s${n++}.db`);
  const { db } = openSearchIndex(path);
  const writer = new SearchWriter(db);
  writer.batch(() => {
    for (const r of rows) writer.add(r);
    writer.setMeta("caught_up", "1");
  });
  return { path, writer };
}

const item = (sid: string, id: string, type: string, at: number, text: string): DocRow => ({
  file: 1,
  sid,
  item: id,
  type,
  at,
  text,
});

const ROWS: DocRow[] = [
  item(A, "u1:0", "message:user:in", 1000, "Add a claim button to the board, then run the tests."),
  item(A, "a2:0", "thinking", 2000, "The board lives in web/board.tsx; I should read it first."),
  item(A, "a3:0", "tool:Bash", 3000, "npm test -- --grep claim\n212 tests passed"),
  item(B, "u9:0", "message:user:in", 4000, "Résumé of the café schema: claims are per item."),
  { sid: B, peer: A, item: "i/7", type: "message", at: 5000, text: "schema merged, go ahead" },
  { sid: A, item: `${A}@6000`, type: "notification", at: 6000, text: "need a decision on claims" },
];

function search(path: string, args: SearchArgs) {
  const db = openSearchReader(path)!;
  try {
    return runSearch(db, args);
  } finally {
    db.close();
  }
}

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ContractError);
    return { code: (error as ContractError).code, msg: (error as Error).message };
  }
  throw new Error("not refused");
};

describe("search queries", () => {
  const { path } = index(ROWS);
  const items = (args: SearchArgs) => search(path, args).hits.map((h) => h.item ?? h.mid ?? h.type);

  it("finds words across items, messages and notifications, with snippets and ranks", () => {
    const r = search(path, { q: "claim" });
    expect(r.indexing).toBe(false);
    expect(r.more).toBe(false);
    expect(r.hits.map((h) => h.item)).toEqual(expect.arrayContaining(["u1:0", "a3:0"]));
    const prompt = r.hits.find((h) => h.item === "u1:0")!;
    expect(prompt).toMatchObject({ sid: A, type: "message:user:in", at: 1000 });
    const [start, end] = prompt.highlights[0]!;
    expect(prompt.snippet.slice(start, end)).toBe("claim");
    expect(prompt.rank).toBeGreaterThan(0);
    // Ranked best first.
    const ranks = r.hits.map((h) => h.rank);
    expect([...ranks].sort((x, y) => y - x)).toEqual(ranks);
    expect(items({ q: "merged" })).toEqual(["i/7"]);
    expect(search(path, { q: "merged" }).hits[0]).toMatchObject({ sid: B, from: A, mid: "i/7" });
    expect(items({ q: "decision" })).toEqual(["notification"]);
  });

  it("reads words, phrases, prefixes and operators; case and accents fold", () => {
    expect(items({ q: "CLAIM button" })).toEqual(["u1:0"]);
    expect(items({ q: '"run the tests"' })).toEqual(["u1:0"]);
    expect(items({ q: '"tests the run"' })).toEqual([]);
    expect(items({ q: "resume cafe" })).toEqual(["u9:0"]);
    expect(items({ q: "claim*" }).sort()).toEqual(["a3:0", "notification", "u1:0", "u9:0"]);
    expect(items({ q: "board NOT tests" })).toEqual(["a2:0"]);
    expect(items({ q: "(schema OR decision) AND claims" }).sort()).toEqual([
      "notification",
      "u9:0",
    ]);
    // Punctuation inside a word is the word's: a path is a phrase.
    expect(items({ q: "web/board.tsx" })).toEqual(["a2:0"]);
    expect(items({ q: "--grep" })).toEqual(["a3:0"]);
  });

  it("filters by session (or an id prefix: messages from it too), type prefix and time", () => {
    expect(items({ q: "claim*", sid: B }).sort()).toEqual(["u9:0"]);
    expect(items({ q: "schema", sid: A.slice(0, 8) })).toEqual(["i/7"]);
    expect(items({ q: "claim*", type: "message" }).sort()).toEqual(["u1:0", "u9:0"]);
    expect(items({ q: "claim", type: "tool" })).toEqual(["a3:0"]);
    expect(items({ q: "claim", type: "tool:bash" })).toEqual(["a3:0"]);
    expect(items({ q: "claim", type: "tool:Ba" })).toEqual([]);
    expect(items({ q: "claim*", since: 3500 }).sort()).toEqual(["notification", "u9:0"]);
    expect(items({ q: "claim*", since: 7000 })).toEqual([]);
    expect(search(path, { q: "claim*", limit: 1 })).toMatchObject({ more: true });
  });

  it("never reads a person's characters as FTS5 syntax: columns, quotes, stars, NEAR, SQL", () => {
    for (const q of [
      "tags:sx",
      "text:claim",
      "sid: *",
      "'; DROP TABLE docs; --",
      "NEAR(claim board)",
      "^claim",
      "claim\u0000board",
      "a-b c+d {x y}",
      "ünïcödé 日本語",
      "*claim",
      "claim**",
    ])
      expect(() => search(path, { q })).not.toThrow();
    // Tags are not text: a filter's words never match a query.
    expect(items({ q: `s${A.replaceAll("-", "")}` })).toEqual([]);
    expect(items({ q: "ymessage" })).toEqual([]);
  });

  it("refuses what FTS5 cannot read, and malformed filters, as invalid_args", () => {
    for (const q of [
      '"unclosed',
      "(claim",
      "claim)",
      "",
      "   ",
      "-- ::",
      "claim OR",
      "NOT claim",
      "AND",
    ])
      expect(refusal(() => search(path, { q })).code, q).toBe("invalid_args");
    expect(refusal(() => search(path, { q: "claim OR" })).msg).toMatch(/^query: syntax error/);
    expect(refusal(() => compileQuery("x".repeat(2000))).msg).toMatch(/at most 1024/);
    expect(refusal(() => search(path, { q: "claim", sid: "not-a-sid!" })).code).toBe(
      "invalid_args",
    );
    expect(refusal(() => search(path, { q: "claim", type: ":" })).code).toBe("invalid_args");
  });

  it("reads since as a duration, a date or epoch ms", () => {
    const now = Date.UTC(2026, 10, 30, 12);
    expect(parseSince("30m", now)).toBe(now - 1_800_000);
    expect(parseSince("2h", now)).toBe(now - 7_200_000);
    expect(parseSince("7d", now)).toBe(now - 7 * 86_400_000);
    expect(parseSince("2026-11-30", now)).toBe(Date.UTC(2026, 10, 30));
    expect(parseSince("2026-11-30T10:00:00Z", now)).toBe(Date.UTC(2026, 10, 30, 10));
    expect(parseSince("1796032801000", now)).toBe(1796032801000);
    for (const bad of ["yesterday", "5y", "-3h", "2026-13-45"])
      expect(refusal(() => parseSince(bad, now)).code, bad).toBe("invalid_args");
  });
});

describe("the index file", () => {
  it("says it is still indexing until its writer has read every source", () => {
    const { path, writer } = index(ROWS);
    writer.batch(() => writer.setMeta("caught_up", "0"));
    expect(search(path, { q: "claim" }).indexing).toBe(true);
  });

  it("keeps one row per message however often it is handed over", () => {
    const { path, writer } = index();
    const m: DocRow = { sid: B, peer: A, item: "i/8", type: "message", at: 1, text: "once only" };
    writer.batch(() => {
      writer.add(m);
      writer.add(m);
    });
    writer.add(m);
    expect(search(path, { q: "once" }).hits).toHaveLength(1);
  });

  it("forgets what a restarted file gave, and nothing else", () => {
    const { path, writer } = index();
    const f = writer.batch(() => writer.addFile({ path: "/x.jsonl", sid: A }, "1:2", "{}", "{}"));
    writer.batch(() => {
      writer.add({ ...item(A, "u1:0", "message:user:in", 1, "alpha words"), file: f.id });
      writer.add({ sid: A, item: `${A}@2`, type: "notification", at: 2, text: "alpha note" });
      writer.noteCall(f.id, "toolu_1", "Bash", 10);
    });
    expect(writer.callOf(f.id, "toolu_1")).toEqual({ tool: "Bash", offset: 10 });
    writer.batch(() => writer.restartFile(f.id, "1:3", "{}", "{}"));
    expect(search(path, { q: "alpha" }).hits.map((h) => h.type)).toEqual(["notification"]);
    expect(writer.callOf(f.id, "toolu_1")).toBeUndefined();
    expect(writer.file("/x.jsonl")).toMatchObject({ identity: "1:3", offset: 0 });
  });

  it("a damaged file, or one of another version, is started afresh", () => {
    const damaged = join(tmp, "damaged.db");
    writeFileSync(
      damaged,
      "this is not a database, just text long enough to look like one".repeat(100),
    );
    expect(openSearchIndex(damaged).fresh).toBe(true);
    const { path, writer } = index(ROWS);
    writer.db.pragma("user_version = 999");
    writer.db.close();
    expect(openSearchReader(path)).toBeUndefined();
    const again = openSearchIndex(path);
    expect(again.fresh).toBe(true);
    again.db.close();
    expect(search(path, { q: "claim*" }).hits).toEqual([]);
    expect(openSearchIndex(path).fresh).toBe(false);
  });

  it("an index of version 3 (its words stored in FTS5's content and again with their tags) is rebuilt", () => {
    const old = join(tmp, "v3.db");
    const db = new Database(old);
    db.exec(`CREATE TABLE texts (id INTEGER PRIMARY KEY, text TEXT NOT NULL, tags TEXT NOT NULL);
      CREATE VIRTUAL TABLE fts USING fts5 (text, tags, content = 'texts', content_rowid = 'id')`);
    db.pragma("user_version = 3");
    db.close();
    expect(openSearchReader(old)).toBeUndefined();
    const again = openSearchIndex(old);
    expect(again.fresh).toBe(true);
    const writer = new SearchWriter(again.db);
    writer.batch(() => {
      for (const r of ROWS) writer.add(r);
    });
    const hit = search(old, { q: "schem*", sid: B.slice(0, 4) }).hits[0];
    expect(hit).toMatchObject({
      mid: "i/7",
      snippet: "schema merged, go ahead",
      highlights: [[0, 6]],
    });
  });
});

import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { itemText } from "../../src/harness/item-text.js";
import { classifyAll } from "../../src/harness/transcript-classifier.js";
import type { TranscriptHarness } from "../../src/harness/transcript-files.js";
import { readLines, type TranscriptLine } from "../../src/harness/transcript-lines.js";
import {
  compileSearch,
  type SearchRequest,
  searchTranscripts,
} from "../../src/harness/transcript-search.js";
import { indexedSessions } from "../../src/instance/search/sessions.js";
import { TranscriptIndexer } from "../../src/instance/search/transcript-indexer.js";
import { openSearchIndex, openSearchReader, SearchWriter } from "../../src/store/search-index.js";
import { runSearch } from "../../src/store/search-query.js";
import { ROOT } from "../helpers/instance.js";
import { claude, claudeTurn } from "../helpers/transcript-records.js";

// Every transcript of a config home into the search index, incrementally
// (DR-0037): each file read once from where the index left it, across
// restarts; a replaced or shortened file read again; the same typed items
// the transcript ops give; and session_search answered from the index as
// the walk answers it.

const FIXTURES = join(ROOT, "test", "fixtures");
const SID = "3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d";
const AGENT = "a7c3e91f04d2b685";
const tmp = mkdtempSync(join(tmpdir(), "ccmsg-indexer-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;

function claudeHome(): { home: string; main: string; agent: string } {
  const home = join(tmp, `h${n++}`);
  cpSync(join(FIXTURES, "claude-code", "config-home", "projects"), join(home, "projects"), {
    recursive: true,
  });
  const dir = join(home, "projects", "-home-dev-widgets");
  return {
    home,
    main: join(dir, `${SID}.jsonl`),
    agent: join(dir, SID, "subagents", `agent-${AGENT}.jsonl`),
  };
}

/** An indexer over `home` writing `index`, and a way to wait until it has
 * read everything there is. */
function indexer(harness: TranscriptHarness, home: string, index: string) {
  const { db } = openSearchIndex(index);
  const writer = new SearchWriter(db);
  const waiting: (() => void)[] = [];
  const ix = new TranscriptIndexer({
    harness,
    home,
    writer,
    rescanMs: 3_600_000,
    warn: (msg, fields) => {
      throw new Error(`${msg} ${JSON.stringify(fields)}`);
    },
    caughtUp: () => {},
    drained: () => {
      for (const w of waiting.splice(0)) w();
    },
  });
  const settle = async () => {
    await ix.walk();
    while (!ix.idle) await new Promise<void>((r) => waiting.push(r));
  };
  const close = () => {
    ix.close();
    db.close();
  };
  /** The indexed rows of one file: [item id, type], in index order. */
  const rows = (path: string) =>
    db
      .prepare(
        "SELECT d.item, d.type, d.agent_id FROM docs d JOIN files f ON f.id = d.file WHERE f.path = ? ORDER BY d.id",
      )
      .all(path) as { item: string; type: string; agent_id: string | null }[];
  return { ix, db, settle, close, rows, start: () => ix.start() };
}

async function lines(path: string): Promise<TranscriptLine[]> {
  const out: TranscriptLine[] = [];
  for await (const b of readLines(path)) out.push(...b);
  return out;
}

/** What one pass of the classifier over the whole file gives, as the index
 * keeps it: items with words in them. */
async function expected(harness: TranscriptHarness, path: string, agentId?: string) {
  const { items } = classifyAll(harness, await lines(path), agentId ? { agentId } : {});
  return items
    .filter((i) => itemText(i as never) !== "")
    .map((i) => ({ item: i.id, type: i.type, agent_id: agentId ?? null }));
}

describe("the transcript indexer", () => {
  it("indexes every transcript of a Claude Code home as typed items, sub-agents' too", async () => {
    const { home, main, agent } = claudeHome();
    const t = indexer("claude", home, join(tmp, `i${n++}.db`));
    await t.start();
    await t.settle();
    expect(t.rows(main)).toEqual(await expected("claude", main));
    expect(t.rows(agent)).toEqual(await expected("claude", agent, AGENT));
    expect(t.rows(main).length).toBeGreaterThan(10);
    t.close();
  });

  it("follows appends, a partial last line only once complete, and resumes after a restart", async () => {
    const { home, main } = claudeHome();
    const index = join(tmp, `i${n++}.db`);
    let t = indexer("claude", home, index);
    await t.start();
    await t.settle();
    const turn = claudeTurn(1);
    const half = Math.floor(turn.length / 2);
    // A call in the first half, its result after the restart: the result is
    // still typed by its call.
    appendFileSync(main, `${turn.slice(0, half).join("\n")}\n${turn[half]!.slice(0, 40)}`);
    await t.settle();
    const partial = await expected("claude", main);
    expect(t.rows(main)).toEqual(partial);
    t.close();
    // A new indexer on the same index: it starts where the last one stopped.
    t = indexer("claude", home, index);
    appendFileSync(main, `${turn[half]!.slice(40)}\n${turn.slice(half + 1).join("\n")}\n`);
    await t.start();
    await t.settle();
    const whole = await expected("claude", main);
    expect(whole.length).toBeGreaterThan(partial.length);
    expect(t.rows(main)).toEqual(whole);
    expect(t.rows(main).some((r) => r.type === "tool:Bash")).toBe(true);
    t.close();
  });

  it("reads a replaced or shortened file again, keeping nothing of what it gave before", async () => {
    const { home, main } = claudeHome();
    const t = indexer("claude", home, join(tmp, `i${n++}.db`));
    await t.start();
    await t.settle();
    const first = readFileSync(main, "utf8").split("\n").filter(Boolean);
    // Replaced: another file (another inode) at the path, shorter.
    const next = `${main}.new`;
    writeFileSync(next, `${first.slice(0, 3).join("\n")}\n`);
    renameSync(next, main);
    await t.settle();
    expect(t.rows(main)).toEqual(await expected("claude", main));
    // Shortened in place, then grown past where it was.
    truncateSync(main, 0);
    appendFileSync(
      main,
      `${JSON.stringify(claude.prompt("z-1", Date.UTC(2026, 10, 30), "a brand new prompt"))}\n`,
    );
    await t.settle();
    expect(t.rows(main)).toEqual(await expected("claude", main));
    expect(t.rows(main).map((r) => r.item)).toEqual(["z-1:0"]);
    t.close();
  });

  it("indexes a message from another session as the timeline names it: its words, its sender", async () => {
    // What the real Claude Code 2.1.328 wrote for two ccmsg messages.
    const home = join(tmp, `h${n++}`);
    const dir = join(home, "projects", "-tmp-work");
    mkdirSync(dir, { recursive: true });
    const peers = "3d04d386-4f18-4430-90a2-ec907a6d2f91";
    const path = join(dir, `${peers}.jsonl`);
    cpSync(join(FIXTURES, "claude-code", "transcripts", "2.1.328-peer-messages.jsonl"), path);
    const index = join(tmp, `i${n++}.db`);
    const t = indexer("claude", home, index);
    await t.start();
    await t.settle();
    expect(t.rows(path)).toEqual(await expected("claude", path));
    const reader = openSearchReader(index)!;
    try {
      const sender = "89b6fb5b-a6e9-420a-832c-229bc902061e";
      expect(runSearch(reader, { q: "idle" }).hits).toEqual([
        expect.objectContaining({ sid: peers, type: "message:session:in", from: sender }),
      ]);
      expect(runSearch(reader, { q: "mid-turn", type: "message:session:in" }).hits).toHaveLength(1);
      // The harness's advice to its model is not what the sender said.
      expect(runSearch(reader, { q: "laundering" }).hits).toEqual([]);
    } finally {
      reader.close();
      t.close();
    }
  });

  it("indexes a reply the person denied as the timeline shows it: a denied call, no message out", async () => {
    // What the real Claude Code 2.1.328 wrote when the person pressed Esc.
    const home = join(tmp, `h${n++}`);
    const dir = join(home, "projects", "-tmp-rec-run-proj");
    mkdirSync(dir, { recursive: true });
    const path = join(dir, "b7963089-04d0-4e6d-8270-5cbf82be9456.jsonl");
    cpSync(join(FIXTURES, "claude-code", "transcripts", "2.1.328-denied-reply.jsonl"), path);
    const index = join(tmp, `i${n++}.db`);
    const t = indexer("claude", home, index);
    await t.start();
    await t.settle();
    expect(t.rows(path)).toEqual(await expected("claude", path));
    const reader = openSearchReader(index)!;
    try {
      // The words are found in the call that asked for them, never as a message sent.
      expect(runSearch(reader, { q: "got your message" }).hits.map((h) => h.type)).toEqual([
        "tool:Bash",
      ]);
      expect(
        runSearch(reader, { q: "got your message", type: "message:session:out" }).hits,
      ).toEqual([]);
    } finally {
      reader.close();
      t.close();
    }
  });

  it("indexes Codex rollouts, and never a file reached through a symlink out of the tree", async () => {
    const home = join(tmp, `codex${n++}`);
    cpSync(join(FIXTURES, "codex", "codex-home", "sessions"), join(home, "sessions"), {
      recursive: true,
    });
    const t = indexer("codex", home, join(tmp, `i${n++}.db`));
    await t.start();
    await t.settle();
    const files = t.db.prepare("SELECT path, sid FROM files").all() as { path: string }[];
    expect(files).toHaveLength(1);
    expect(t.rows(files[0]!.path)).toEqual(await expected("codex", files[0]!.path));
    t.close();

    const { home: h } = claudeHome();
    const outside = claudeHome();
    mkdirSync(join(h, "projects", "-elsewhere"));
    const other = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
    symlinkSync(outside.main, join(h, "projects", "-elsewhere", `${other}.jsonl`));
    const c = indexer("claude", h, join(tmp, `i${n++}.db`));
    await c.start();
    await c.settle();
    const sids = c.db.prepare("SELECT DISTINCT sid FROM files").pluck().all();
    expect(sids).toEqual([SID]);
    c.close();
  });
});

describe("session_search from the index", () => {
  it("answers as the walk does", async () => {
    const { home, main } = claudeHome();
    // A second session, so that filters have something to leave out.
    const other = "aaaaaaaa-0000-4000-8000-000000000001";
    mkdirSync(join(home, "projects", "-work-a"));
    writeFileSync(
      join(home, "projects", "-work-a", `${other}.jsonl`),
      `${[
        {
          ...claude.prompt("o-1", Date.UTC(2026, 10, 29), "please add the zebra stripes"),
          cwd: "/work/a",
          sessionId: other,
        },
        {
          ...claude.prompt("o-2", Date.UTC(2026, 10, 29, 1), "then claim the button"),
          cwd: "/work/a",
          sessionId: other,
        },
      ]
        .map((r) => JSON.stringify(r))
        .join("\n")}\n`,
    );
    expect(main).toBeDefined();
    const t = indexer("claude", home, join(tmp, `i${n++}.db`));
    await t.start();
    await t.settle();
    const requests: SearchRequest[] = [
      {},
      { query: "claim button" },
      { query: "claim suite" },
      { query: "claim zebra" },
      { query: "zebra\nsuite" },
      { query: "CLAIM" },
      { query: "CLAIM", case_sensitive: true },
      { query: "suite", target_agent: false },
      { query: "suite", target_user: false },
      { query: "claim", cwd: "work a" },
      { query: "claim", sid: "AAAA" },
      { query: "export function Board" },
      { query: "Todos have been modified" },
      { query: "also check lint" },
      { query: "POST /claims" },
      { query: "claim", modified_within_ms: 60_000 },
    ];
    for (const request of requests) {
      const compiled = compileSearch(request);
      if (!compiled.ok) throw new Error(compiled.why);
      const walked: unknown[] = [];
      await searchTranscripts("claude", home, compiled.search, Date.now() + 10_000, (h) =>
        walked.push(h),
      );
      const terms = (request.query ?? "")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => l.trim().split(/\s+/));
      const indexed = indexedSessions(t.db, compiled.search, terms, Date.now() + 10_000);
      expect(indexed.truncated).toBe(false);
      expect(indexed.hits, JSON.stringify(request)).toEqual(walked);
    }
    t.close();
  });
});

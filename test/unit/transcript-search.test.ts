import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  compileSearch,
  type FoundSession,
  MAX_PATTERN_CHARS,
  type SearchHarness,
  type SearchRequest,
  searchTranscripts,
} from "../../src/harness/transcript-search.js";
import { ROOT } from "../helpers/instance.js";

// session_search's walk and matching (contract §4.3.3) over copies of the
// real transcript shapes (harness.md §6): what counts is what the person and
// the agent said — never tool output, thinking or injected text.

const FIXTURES = join(ROOT, "test", "fixtures");
const SID = "3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d";
const THREAD = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5";
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function home(harness: SearchHarness): string {
  const d = mkdtempSync(join(tmpdir(), "ccmsg-search-"));
  dirs.push(d);
  if (harness === "claude")
    cpSync(join(FIXTURES, "claude-code", "config-home", "projects"), join(d, "projects"), {
      recursive: true,
    });
  else
    cpSync(join(FIXTURES, "codex", "codex-home", "sessions"), join(d, "sessions"), {
      recursive: true,
    });
  return d;
}

const claudeHome = home("claude");
const codexHome = home("codex");

async function search(
  req: SearchRequest,
  harness: SearchHarness = "claude",
  at = harness === "claude" ? claudeHome : codexHome,
  deadline = Date.now() + 10_000,
): Promise<{ hits: FoundSession[]; truncated: boolean }> {
  const compiled = compileSearch(req);
  if (!compiled.ok) throw new Error(compiled.why);
  const hits: FoundSession[] = [];
  const { truncated } = await searchTranscripts(harness, at, compiled.search, deadline, (h) =>
    hits.push(h),
  );
  return { hits, truncated };
}

const sids = async (req: SearchRequest, harness?: SearchHarness) =>
  (await search(req, harness)).hits.map((h) => h.sid);

describe("session search", () => {
  it("finds what the person said, with the file's facts", async () => {
    const { hits, truncated } = await search({ query: "claim button" });
    expect(truncated).toBe(false);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({
      sid: SID,
      file: join(claudeHome, "projects", "-home-dev-widgets", `${SID}.jsonl`),
      cwd: "/home/dev/widgets",
      title: "Claim button for the work board",
      model: "claude-opus-4-5-20251101",
      created_at: Date.parse("2026-11-30T10:00:01.000Z"),
      matches: [
        {
          role: "user",
          text: "Add a claim button to the board, then run the tests.",
          said_at: Date.parse("2026-11-30T10:00:01.000Z"),
        },
      ],
    });
  });

  it("ANDs a clause's terms across messages and ORs the clauses", async () => {
    const both = (await search({ query: "claim suite" })).hits[0];
    expect(both?.matches.map((m) => m.role)).toEqual(["user", "agent"]);
    expect(await sids({ query: "claim zebra" })).toEqual([]);
    expect(await sids({ query: "zebra\nsuite" })).toEqual([SID]);
  });

  it("never matches tool output, thinking or harness-injected text", async () => {
    expect(await sids({ query: "export function Board" })).toEqual([]);
    expect(await sids({ query: "Todos have been modified" })).toEqual([]);
    expect(await sids({ query: "web/board.tsx" })).toEqual([]);
    expect(await sids({ query: "local-command-caveat" })).toEqual([]);
    // What another session sent in is neither the person's nor the agent's.
    expect(await sids({ query: "POST /claims" })).toEqual([]);
    // The queued prompt and the sub-agent's file are not the session's dialogue.
    expect(await sids({ query: "also check lint" })).toEqual([]);
  });

  it("targets the person's or the agent's messages, and honours case", async () => {
    expect(await sids({ query: "suite", target_agent: false })).toEqual([]);
    expect(await sids({ query: "suite", target_user: false })).toEqual([SID]);
    expect(await sids({ query: "CLAIM", case_sensitive: true })).toEqual([]);
    expect(await sids({ query: "CLAIM" })).toEqual([SID]);
  });

  it("regular expressions: matched per message, refused when invalid or too long", async () => {
    expect(await sids({ query: "cl[a]im\\s+BUTTON", regex: true })).toEqual([SID]);
    expect(await sids({ query: "cl[a]im\\s+BUTTON", regex: true, case_sensitive: true })).toEqual(
      [],
    );
    expect(compileSearch({ query: "(", regex: true })).toMatchObject({
      ok: false,
      why: expect.stringContaining("not a regular expression"),
    });
    expect(compileSearch({ query: "a".repeat(MAX_PATTERN_CHARS + 1), regex: true })).toEqual({
      ok: false,
      why: `query: a pattern is at most ${MAX_PATTERN_CHARS} characters`,
    });
  });

  it("filters by cwd words, sid substring and age; no query lists every session", async () => {
    expect(await sids({ cwd: "dev widgets" })).toEqual([SID]);
    expect(await sids({ cwd: "widgets elsewhere" })).toEqual([]);
    expect(await sids({ sid: "3F1C9A52" })).toEqual([SID]);
    expect(await sids({ sid: "ffff" })).toEqual([]);
    const all = await search({});
    expect(all.hits.map((h) => [h.sid, h.matches])).toEqual([[SID, []]]);
    const aged = home("claude");
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(join(aged, "projects", "-home-dev-widgets", `${SID}.jsonl`), old, old);
    expect((await search({ modified_within_ms: 60_000 }, "claude", aged)).hits).toEqual([]);
    expect((await search({ modified_within_ms: 7_200_000 }, "claude", aged)).hits).toHaveLength(1);
  });

  it("keeps to the transcript tree: a symlink out of it is not searched", async () => {
    const h = home("claude");
    const outside = home("claude");
    const other = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
    mkdirSync(join(h, "projects", "-elsewhere"));
    symlinkSync(
      join(outside, "projects", "-home-dev-widgets", `${SID}.jsonl`),
      join(h, "projects", "-elsewhere", `${other}.jsonl`),
    );
    expect((await search({ query: "claim" }, "claude", h)).hits.map((x) => x.sid)).toEqual([SID]);
  });

  it("Codex rollouts: what the person typed and the agent answered, with model and effort", async () => {
    const { hits } = await search({ query: "widgets claim" }, "codex");
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({
      sid: THREAD,
      cwd: "/home/dev/widgets-wt/cli",
      model: "gpt-5-codex",
      effort: "high",
      matches: [
        { role: "user", text: "Add `widgets claim` to the CLI." },
        { role: "agent", text: "Added `widgets claim`; tests pass." },
      ],
    });
    // Injected context and tool output are not what anyone said.
    expect(await sids({ query: "environment_context" }, "codex")).toEqual([]);
    expect(await sids({ query: "TODO" }, "codex")).toEqual([]);
  });

  it("stops at its deadline and says so", async () => {
    const r = await search({ query: "claim" }, "claude", claudeHome, Date.now() - 1);
    expect(r).toEqual({ hits: [], truncated: true });
  });
});

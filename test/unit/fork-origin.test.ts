import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findForkOrigin } from "../../src/harness/claude/fork-origin.js";

// session_fork_origin's search over fixture-shaped transcripts, written the
// way Claude Code 2.1.328 writes a fork (verified against the real harness in
// test/integration/launcher-real-claude.test.ts): the ancestor's conversation
// chain copied record for record — same uuid, parentUuid and timestamp, the
// sessionId rewritten — then the fork's own records.

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

type Rec = Record<string, unknown>;

function home(): { home: string; project: string } {
  const home = mkdtempSync(join(tmpdir(), "ccmsg-fork-"));
  roots.push(home);
  const project = join(home, "projects", "-work-widgets");
  mkdirSync(project, { recursive: true });
  return { home, project };
}

let clock = Date.UTC(2026, 10, 30, 9, 0, 0);

/** A conversation of `n` prompt/answer pairs continuing `parent`. */
function chain(n: number, parent: string | null = null): Rec[] {
  const out: Rec[] = [];
  let last = parent;
  for (let i = 0; i < n; i++) {
    for (const type of ["user", "assistant"]) {
      const uuid = randomUUID();
      clock += 1000;
      out.push({
        parentUuid: last,
        type,
        uuid,
        timestamp: new Date(clock).toISOString(),
        message: { role: type, content: `${type} ${i}` },
      });
      last = uuid;
    }
  }
  return out;
}

/** The session's file: bookkeeping without uuids around its records, every
 * record stamped with the session's own id. */
function write(project: string, sid: string, records: Rec[]): string {
  const path = join(project, `${sid}.jsonl`);
  const lines = [
    { type: "mode", mode: "normal", sessionId: sid },
    { type: "queue-operation", operation: "enqueue", sessionId: sid },
    ...records.map((r) => ({ ...r, sessionId: sid })),
    { type: "last-prompt", sessionId: sid },
  ];
  writeFileSync(path, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
  return path;
}

/** A file created strictly after `path` (creation times tick coarsely). */
function writeLater(after: string, project: string, sid: string, records: Rec[]): string {
  const born = statSync(after).birthtimeMs;
  const deadline = Date.now() + 5000;
  for (;;) {
    const path = write(project, sid, records);
    if (statSync(path).birthtimeMs > born || born === 0) return path;
    rmSync(path);
    if (Date.now() > deadline) throw new Error("file creation times do not advance");
  }
}

describe("findForkOrigin", () => {
  it("names the ancestor, the last copied record and how many were copied", async () => {
    const { home: h, project } = home();
    const A = randomUUID();
    const ancestor = chain(3);
    const pathA = write(project, A, [...ancestor, ...chain(2, ancestor.at(-1)!.uuid as string)]);
    const B = randomUUID();
    const copied = ancestor;
    const own = chain(2, copied.at(-1)!.uuid as string);
    const pathB = writeLater(pathA, project, B, [...copied, ...own]);
    expect(await findForkOrigin(h, B, pathB)).toEqual({
      sid: A,
      boundary_uuid: copied.at(-1)!.uuid,
      copied: copied.length,
    });
    // The ancestor itself is no fork, and its fork (born later) is not its origin.
    expect(await findForkOrigin(h, A, pathA)).toBeUndefined();
  });

  it("a fork of a fork: the nearest ancestor, not the grandparent; and not the fork's own fork", async () => {
    const { home: h, project } = home();
    const G = randomUUID();
    const g = chain(2);
    const pathG = write(project, G, g);
    const A = randomUUID();
    const a = [...g, ...chain(2, g.at(-1)!.uuid as string)];
    const pathA = writeLater(pathG, project, A, a);
    const B = randomUUID();
    const b = [...a, ...chain(1, a.at(-1)!.uuid as string)];
    const pathB = writeLater(pathA, project, B, b);
    const C = randomUUID();
    const pathC = writeLater(pathB, project, C, [...b, ...chain(1, b.at(-1)!.uuid as string)]);
    expect(await findForkOrigin(h, B, pathB)).toEqual({
      sid: A,
      boundary_uuid: a.at(-1)!.uuid,
      copied: a.length,
    });
    expect(await findForkOrigin(h, A, pathA)).toMatchObject({ sid: G, copied: g.length });
    expect(await findForkOrigin(h, C, pathC)).toMatchObject({ sid: B, copied: b.length });
  });

  it("a fork whose ancestor's file is gone, or lies outside projects/, has no origin", async () => {
    const { home: h, project } = home();
    const A = randomUUID();
    const a = chain(2);
    const pathA = write(project, A, a);
    const B = randomUUID();
    const pathB = writeLater(pathA, project, B, [...a, ...chain(1, a.at(-1)!.uuid as string)]);
    rmSync(pathA);
    expect(await findForkOrigin(h, B, pathB)).toBeUndefined();
    // A transcript linked in from outside the tree is not read.
    const outside = mkdtempSync(join(tmpdir(), "ccmsg-fork-out-"));
    roots.push(outside);
    const real = write(outside, A, a);
    symlinkSync(real, join(project, `${A}.jsonl`));
    expect(await findForkOrigin(h, B, pathB)).toBeUndefined();
  });

  it("a transcript with no records of its own, or none shared, is no fork", async () => {
    const { home: h, project } = home();
    const empty = randomUUID();
    const pathEmpty = write(project, empty, []);
    expect(await findForkOrigin(h, empty, pathEmpty)).toBeUndefined();
    const other = randomUUID();
    write(project, other, chain(2));
    const alone = randomUUID();
    const pathAlone = write(project, alone, chain(2));
    expect(await findForkOrigin(h, alone, pathAlone)).toBeUndefined();
  });

  it("finds the ancestor in another project directory, with the first record past a chunk boundary", async () => {
    const { home: h } = home();
    const elsewhere = join(h, "projects", "-work-elsewhere");
    mkdirSync(elsewhere);
    const A = randomUUID();
    // 1.5 MiB of earlier conversation, so the shared record sits in the second chunk.
    const early = chain(1).map((r): Rec => ({ ...r, message: { content: "x".repeat(800_000) } }));
    const shared = chain(2, early.at(-1)!.uuid as string);
    const pathA = write(elsewhere, A, [...early, ...shared]);
    const B = randomUUID();
    const { project } = { project: join(h, "projects", "-work-widgets") };
    const pathB = writeLater(pathA, project, B, [
      ...shared,
      ...chain(1, shared.at(-1)!.uuid as string),
    ]);
    expect(await findForkOrigin(h, B, pathB)).toEqual({
      sid: A,
      boundary_uuid: shared.at(-1)!.uuid,
      copied: shared.length,
    });
  });
});

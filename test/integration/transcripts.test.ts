import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Pushed } from "../../src/client/client.js";
import { requiredPath } from "../helpers/env.js";
import { isolatedHome, ROOT, startInstance, type TestInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Issue 10 item 1: raw transcripts — `transcript_read` pages and the
// `transcript:<sid>` append topic (scenarios 16 and 17).

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

let inst: TestInstance;
let home: string;
let person: Peer;
const peers: Peer[] = [];
beforeAll(async () => {
  inst = await startInstance();
  home = requiredPath(inst.env, "CLAUDE_CONFIG_DIR");
  person = await Peer.unix(inst.socket);
  await person.helloUser();
});
afterAll(async () => {
  for (const p of [person, ...peers]) p.client.close();
  await inst.stop();
});

function record(i: number, text = `line ${i}`): string {
  return JSON.stringify({
    type: "user",
    uuid: `u-${i}`,
    timestamp: new Date(Date.UTC(2026, 10, 30, 10, 0, i % 60)).toISOString(),
    message: { role: "user", content: text },
  });
}

/** A session's transcript in `projects/<flat>/`, greeted with its path. */
async function session(lines: string[]): Promise<{ sid: string; path: string; peer: Peer }> {
  const sid = newSid();
  const dir = join(home, "projects", "-work-demo");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${sid}.jsonl`);
  writeFileSync(path, lines.map((l) => `${l}\n`).join(""));
  const peer = await Peer.unix(inst.socket);
  peers.push(peer);
  await peer.helloSession(sid, { cwd: "/work/demo", transcript_path: path });
  return { sid, path, peer };
}

/** Delta frames of a topic until their `end` reaches `end`. */
async function deltasUntil(topic: string, end: number): Promise<Pushed[]> {
  const out: Pushed[] = [];
  for (;;) {
    const f = await person.next((p) => p.topic === topic && p.snapshot !== true);
    out.push(f);
    if ((f.data as { end: number }).end >= end) return out;
  }
}

describe("transcript:<sid> follows the file (scenario 16)", () => {
  it("opens with the size, then carries exactly the appended lines, never a partial one", async () => {
    const { sid, path } = await session([record(0), record(1)]);
    const topic = `transcript:${sid}`;
    const snap = await person.subscribe(topic);
    const size0 = readFileSync(path).length;
    expect(snap.data).toEqual({ sid, size: size0 });

    // 500 complete lines in one write, some long enough to need several frames.
    const added = Array.from({ length: 500 }, (_, i) =>
      record(i + 2, i % 50 === 0 ? "x".repeat(200_000) : `line ${i + 2} é`),
    );
    appendFileSync(path, added.map((l) => `${l}\n`).join(""));
    const size1 = readFileSync(path).length;
    const frames = await deltasUntil(topic, size1);
    expect(frames.length).toBeGreaterThan(1);
    let at = size0;
    const got: string[] = [];
    for (const f of frames) {
      const d = f.data as { sid: string; lines: string[]; start: number; end: number };
      expect(d.sid).toBe(sid);
      expect(d.start).toBe(at);
      at = d.end;
      got.push(...d.lines);
    }
    expect(at).toBe(size1);
    expect(got).toEqual(added);

    // A partial line is not sent until its newline is written.
    appendFileSync(path, '{"type":"user","uuid":"u-partial"');
    await new Promise((r) => setTimeout(r, 1500));
    expect(person.frames.filter((p) => p.topic === topic && p.snapshot !== true)).toHaveLength(
      frames.length,
    );
    appendFileSync(path, ',"message":{"role":"user","content":"done"}}\n');
    const [last] = await deltasUntil(topic, readFileSync(path).length);
    expect((last!.data as { lines: string[]; start: number }).start).toBe(size1);
    expect((last!.data as { lines: string[] }).lines).toEqual([
      '{"type":"user","uuid":"u-partial","message":{"role":"user","content":"done"}}',
    ]);
    await person.call("topic_unsubscribe", { topic });
  });

  it("pages backwards with transcript_read, whole lines that reassemble the file byte for byte", async () => {
    const lines = Array.from({ length: 3000 }, (_, i) =>
      record(i, `página ${i} ${"y".repeat(i % 300)}`),
    );
    const { sid, path } = await session(lines);
    appendFileSync(path, '{"partial":'); // a line being written is never returned
    const size = readFileSync(path).length;
    let before: number | undefined;
    const pages: string[][] = [];
    let end0: number | undefined;
    for (;;) {
      const r = await person.call<{ lines: string[]; start: number; end: number; size: number }>(
        "transcript_read",
        { sid, ...(before === undefined ? {} : { before }), max_bytes: 64 * 1024 },
      );
      expect(r.size).toBe(size);
      if (before !== undefined) expect(r.end).toBeLessThanOrEqual(before);
      else end0 = r.end;
      expect(r.end - r.start).toBeLessThanOrEqual(64 * 1024);
      pages.unshift(r.lines);
      if (r.start === 0) break;
      before = r.start;
    }
    expect(pages.length).toBeGreaterThan(5);
    const text = pages
      .flat()
      .map((l) => `${l}\n`)
      .join("");
    expect(text).toBe(lines.map((l) => `${l}\n`).join(""));
    expect(end0).toBe(Buffer.byteLength(text));
  });

  it("a file that was shortened is read again from the start", async () => {
    const { sid, path } = await session([record(0), record(1), record(2)]);
    const topic = `transcript:${sid}`;
    await person.subscribe(topic);
    truncateSync(path, 0);
    appendFileSync(path, `${record(9)}\n`);
    const f = await person.next((p) => p.topic === topic && p.snapshot !== true);
    expect(f.data).toMatchObject({ start: 0, lines: [record(9)] });
    await person.call("topic_unsubscribe", { topic });
  });

  it("a file that appears after the subscription is followed from its first line", async () => {
    const sid = newSid();
    const peer = await Peer.unix(inst.socket);
    peers.push(peer);
    await peer.helloSession(sid, { cwd: "/work/later" });
    const topic = `transcript:${sid}`;
    const snap = await person.subscribe(topic);
    expect(snap.data).toEqual({ sid, size: 0 });
    const dir = join(home, "projects", "-work-later");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${sid}.jsonl`), `${record(1)}\n${record(2)}\n`);
    const frames = await deltasUntil(topic, readFileSync(join(dir, `${sid}.jsonl`)).length);
    expect(frames[0]!.data).toMatchObject({ start: 0 });
    expect(frames.flatMap((f) => (f.data as { lines: string[] }).lines)).toEqual([
      record(1),
      record(2),
    ]);
    await person.call("topic_unsubscribe", { topic });
  });

  it("a session reads its own transcript and no other", async () => {
    const a = await session([record(0)]);
    const b = await session([record(1)]);
    const own = await a.peer.call<{ lines: string[] }>("transcript_read", { sid: a.sid });
    expect(own.lines).toEqual([record(0)]);
    const r = await a.peer.request("transcript_read", { sid: b.sid });
    expect(r.error?.code).toBe("forbidden");
  });
});

describe("transcript containment (scenario 17)", () => {
  it("refuses paths outside projects/, finds the file by walking, and says not_found once it is gone", async () => {
    const outside = join(inst.stateDir, "..", "elsewhere");
    mkdirSync(outside, { recursive: true });
    const dotdot = join(home, "projects", "..", "secret.jsonl");
    writeFileSync(dotdot, `${record(0)}\n`);
    const link = join(home, "projects", "-link");
    rmSync(link, { force: true });
    symlinkSync(outside, link);
    for (const [i, announced] of [
      join(outside, "a.jsonl"),
      dotdot,
      join(link, "a.jsonl"),
    ].entries()) {
      const sid = newSid();
      const peer = await Peer.unix(inst.socket);
      peers.push(peer);
      if (i === 2) writeFileSync(join(outside, `${sid}.jsonl`), `${record(0)}\n`);
      await peer.helloSession(sid, {
        cwd: "/work/x",
        transcript_path: i === 2 ? join(link, `${sid}.jsonl`) : announced,
      });
      const peersSnap = await person.subscribe("peers");
      const row = (peersSnap.data as { peers: { sid: string }[] }).peers.find((p) => p.sid === sid);
      expect(row).toBeDefined();
      expect(row).not.toHaveProperty("transcript_path");
      await person.call("topic_unsubscribe", { topic: "peers" });
      // Nothing outside is ever read, even through the walk.
      const r = await person.request("transcript_read", { sid });
      expect(r.error?.code).toBe("not_found");
      if (i === 2) {
        // The real transcript, put where it belongs, is found by the walk.
        const dir = join(home, "projects", "-work-x");
        mkdirSync(dir, { recursive: true });
        const real = join(dir, `${sid}.jsonl`);
        writeFileSync(real, `${record(5)}\n`);
        const found = await person.call<{ lines: string[] }>("transcript_read", { sid });
        expect(found.lines).toEqual([record(5)]);
        rmSync(real);
        const gone = await person.request("transcript_read", { sid });
        expect(gone.error?.code).toBe("not_found");
      }
    }
    const refusals = inst.log().filter((l) => l.msg === "transcript_path refused");
    expect(refusals.length).toBeGreaterThanOrEqual(3);
    expect(refusals.some((l) => String(l.why).includes("outside"))).toBe(true);
  });

  it("refuses an agent id that could name another file", async () => {
    const { sid } = await session([record(0)]);
    for (const agent_id of ["../x", "a/b", ".."]) {
      const r = await person.request("transcript_read", { sid, agent_id });
      expect(r.error?.code).toBe("invalid_args");
    }
  });
});

describe("a Codex instance reads rollouts", () => {
  it("finds a thread's rollout under sessions/YYYY/MM/DD and follows it", async () => {
    const { root, env } = isolatedHome();
    const codexHome = join(root, "codex");
    const day = join(codexHome, "sessions", "2026", "11", "30");
    mkdirSync(day, { recursive: true });
    const fixture = join(
      ROOT,
      "test",
      "fixtures",
      "codex",
      "codex-home",
      "sessions",
      "2026",
      "11",
      "30",
    );
    const name = readdirSync(fixture).find((f) => f.endsWith(".jsonl"))!;
    const thread = /([0-9a-f-]{36})\.jsonl$/.exec(name)![1]!;
    copyFileSync(join(fixture, name), join(day, name));
    const codex = await startInstance({
      env: { ...env, CODEX_HOME: codexHome, CODEX_THREAD_ID: newSid() },
    });
    try {
      const p = await Peer.unix(codex.socket);
      await p.helloUser();
      const r = await p.call<{ lines: string[]; start: number; size: number }>("transcript_read", {
        sid: thread,
      });
      const text = readFileSync(join(day, name), "utf8");
      const complete = text.slice(0, text.lastIndexOf("\n") + 1);
      expect(r.lines.map((l) => `${l}\n`).join("")).toBe(complete);
      expect(r.start).toBe(0);
      const topic = `transcript:${thread}`;
      const snap = await p.subscribe(topic);
      expect(snap.data).toEqual({ sid: thread, size: Buffer.byteLength(complete) });
      p.client.close();
    } finally {
      await codex.stop();
    }
  });
});

import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { requiredPath } from "../helpers/env.js";
import { startInstance, type TestInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";
import { procStartOf, writeSessionFile } from "../helpers/state-file.js";

// Issue 8, item 10: a process of the owner that is not part of a session
// must not take over that session's inbox, nor declare it stopping, where
// Claude Code's state file names the session's running harness process.

let inst: TestInstance;
let sessionsDir: string;
beforeAll(async () => {
  inst = await startInstance();
  sessionsDir = join(requiredPath(inst.env, "CLAUDE_CONFIG_DIR"), "sessions");
  mkdirSync(sessionsDir, { recursive: true });
});
afterAll(async () => {
  await inst.stop();
});
afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

/** A session's own connection: greets, takes its inbox, prints every line
 * it receives prefixed with its tag. */
const SESSION_CLIENT = `
const [socket, sid, tag] = process.argv.slice(1);
const s = require("node:net").connect(socket, () => {
  s.write(JSON.stringify({ op: "hello", request_id: "h", role: "session", protocol_version: 3, sid }) + "\\n");
  s.write(JSON.stringify({ op: "topic_subscribe", request_id: "s", topic: "inbox" }) + "\\n");
});
let buf = "";
s.on("data", (c) => {
  buf += c;
  let nl;
  while ((nl = buf.indexOf("\\n")) >= 0) { console.log(tag + " " + buf.slice(0, nl)); buf = buf.slice(nl + 1); }
});
`;

/** A stand-in for Claude Code: each line on its stdin starts one more
 * session client as its child (as a hook or a shell command would). */
const HARNESS = `
const { spawn } = require("node:child_process");
const [client, socket, sid] = process.argv.slice(1);
require("node:readline").createInterface({ input: process.stdin }).on("line", (tag) => {
  spawn(process.execPath, ["-e", client, socket, sid, tag], { stdio: ["ignore", "inherit", "inherit"] });
});
process.stdin.on("end", () => process.exit(0));
`;

class FakeHarness {
  readonly lines: { tag: string; frame: Record<string, unknown> }[] = [];
  private readonly waiters: (() => void)[] = [];
  readonly child: ChildProcessWithoutNullStreams;

  constructor(socket: string, sid: string) {
    this.child = spawn(process.execPath, ["-e", HARNESS, SESSION_CLIENT, socket, sid]);
    let buf = "";
    this.child.stdout.on("data", (c: Buffer) => {
      buf += c.toString();
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const space = line.indexOf(" ");
        this.lines.push({ tag: line.slice(0, space), frame: JSON.parse(line.slice(space + 1)) });
        for (const w of this.waiters.splice(0)) w();
      }
    });
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** Start a child session client and wait for its inbox snapshot. */
  async startClient(tag: string): Promise<void> {
    this.child.stdin.write(`${tag}\n`);
    await this.seen(tag, (f) => f.topic === "inbox" && f.snapshot === true);
  }

  has(tag: string, pred: (f: Record<string, unknown>) => boolean): boolean {
    return this.lines.some((l) => l.tag === tag && pred(l.frame));
  }

  async seen(tag: string, pred: (f: Record<string, unknown>) => boolean): Promise<void> {
    while (!this.has(tag, pred)) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  stop(): void {
    this.child.stdin.end();
    this.child.kill();
  }
}

/** Write Claude Code's state file for `pid` (harness.md §5.1). */
async function stateFile(pid: number, sid: string, procStart?: string): Promise<void> {
  writeSessionFile(dirname(sessionsDir), {
    pid,
    sessionId: sid,
    procStart: procStart ?? (await procStartOf(pid)),
  });
}

const inboxText = (text: string) => (f: Record<string, unknown>) =>
  f.topic === "inbox" && JSON.stringify(f).includes(text);
const superseded = (f: Record<string, unknown>) => f.ev === "subscribe_superseded";

describe("a session vouched for by its harness", () => {
  it("refuses a takeover of its inbox and a stop declared by a process outside the harness", async () => {
    const sid = newSid();
    const harness = new FakeHarness(inst.socket, sid);
    await harness.startClient("c1");
    await stateFile(harness.pid, sid);

    // This test process is no child of the harness: over the socket...
    const intruder = await Peer.unix(inst.socket);
    await intruder.helloSession(sid);
    const take = await intruder.request("topic_subscribe", { topic: "inbox" });
    expect(take.ok).toBe(false);
    expect(take.error?.code).toBe("forbidden");
    const stop = await intruder.request("session_stopping", {});
    expect(stop.error?.code).toBe("forbidden");
    // ...and over the WebSocket, even with the owner's credential.
    const remote = await Peer.ws(`${inst.http.replace("http:", "ws:")}ws`);
    await remote.helloSession(sid);
    expect((await remote.request("topic_subscribe", { topic: "inbox" })).error?.code).toBe(
      "forbidden",
    );

    // The session keeps its inbox: a message reaches it, not the intruders.
    const sender = await Peer.unix(inst.socket);
    await sender.helloSession(newSid());
    expect(await sender.call("message_send", { to: sid, text: "for c1 only" })).toEqual({
      delivered: true,
    });
    await harness.seen("c1", inboxText("for c1 only"));
    expect(harness.has("c1", superseded)).toBe(false);
    expect(JSON.stringify(intruder.frames)).not.toContain("for c1 only");
    expect(
      inst
        .log()
        .some((l) => String(l.msg).includes("outside the session's harness") && l.sid === sid),
    ).toBe(true);

    // The harness's own children may take the inbox over, as today.
    await harness.startClient("c2");
    await harness.seen("c1", superseded);
    await sender.call("message_send", { to: sid, text: "now for c2" });
    await harness.seen("c2", inboxText("now for c2"));

    for (const p of [intruder, remote, sender]) p.close();
    harness.stop();
  });

  it("keeps today's rule where no live harness vouches: no state file, or a recycled pid", async () => {
    for (const recorded of ["none", "recycled"] as const) {
      const sid = newSid();
      const holder = await Peer.unix(inst.socket);
      await holder.helloSession(sid);
      await holder.subscribe("inbox");
      // A state file whose pid now belongs to another process (its start
      // time differs) names nobody.
      if (recorded === "recycled") await stateFile(process.pid, sid, "1");
      const other = await Peer.unix(inst.socket);
      await other.helloSession(sid);
      await other.subscribe("inbox");
      await holder.next(superseded);
      holder.close();
      other.close();
    }
  });
});

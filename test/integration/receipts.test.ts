import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { renderDirectDelivery } from "../../src/contract/direct-delivery.js";
import type { InboxMessage } from "../../src/contract/messaging.js";
import type { Receipt } from "../../src/contract/receipts.js";
import { requiredPath } from "../helpers/env.js";
import { FakeHarness } from "../helpers/fake-harness.js";
import {
  CLI,
  isolatedHome,
  runCli,
  startInstance,
  type TestInstance,
} from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Receipts (DR-0054) against a FakeHarness: a messaging socket that answers
// like Claude Code's but never writes the transcript record. The test writes
// the recipient's transcript itself, as the harness would: what the model
// was given, and what it answered.

let inst: TestInstance;
let claudeHome: string;
beforeAll(async () => {
  inst = await startInstance();
  claudeHome = requiredPath(inst.env, "CLAUDE_CONFIG_DIR");
});
afterAll(async () => {
  await inst.stop();
});
afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

async function session(sid: string): Promise<Peer> {
  const p = await Peer.unix(inst.socket);
  await p.helloSession(sid);
  return p;
}

/** The recipient's transcript, appended to as its harness would. */
function transcript(sid: string) {
  const dir = join(claudeHome, "projects", "-home-dev-widgets");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${sid}.jsonl`);
  let n = 0;
  const write = (r: object) => appendFileSync(path, `${JSON.stringify(r)}\n`);
  const base = (at: number) => ({
    uuid: `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`,
    sessionId: sid,
    cwd: "/home/dev/widgets",
    timestamp: new Date(at).toISOString(),
  });
  return {
    prompt(text: string, at: number) {
      write({ ...base(at), type: "user", message: { role: "user", content: text } });
    },
    answer(text: string, at: number) {
      write({
        ...base(at),
        type: "assistant",
        message: {
          id: `msg_${n}`,
          role: "assistant",
          content: [{ type: "text", text }],
          stop_reason: "end_turn",
        },
      });
    },
  };
}

/** The next receipt frame for `mid` whose state passes `ok`. */
async function receipt(p: Peer, topic: string, mid: string, ok: (r: Receipt) => boolean) {
  const frame = await p.next(
    (f) =>
      f.ev === "topic" &&
      f.topic === topic &&
      (f.data as { receipts: Receipt[] }).receipts.some((r) => r.mid === mid && ok(r)),
    20_000,
  );
  return (frame.data as { receipts: Receipt[] }).receipts.find((r) => r.mid === mid)!;
}

describe("receipts from the recipient's transcript", () => {
  it("a message the socket took but the transcript moved on without is offered again by the inbox, and seen once", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await session(A);
    await a.subscribe(`receipts:${A}`);
    const harness = await FakeHarness.start({ configHome: claudeHome, sid: B });
    const b = await session(B);
    const log = transcript(B);
    log.prompt("start", Date.now());
    await b.subscribe("inbox");

    expect(await a.call("message_send", { to: B, text: "lost in the harness" })).toEqual({
      delivered: true,
    });
    const [frame] = await harness.taken(1);
    const mid = /ccmsg-mid="([^"]+)"/.exec(frame!.message.content)![1]!;
    // The model is asked again, well after the delivery, without it.
    const later = Date.now() + 5000;
    log.prompt("what next?", later);
    log.answer(`(quoting ccmsg-mid="${mid}" stamps nothing)`, later + 100);
    const unseen = await receipt(a, `receipts:${A}`, mid, (r) => r.state === "unseen");
    expect(unseen).toMatchObject({ to: B, from: A, route: "socket", state: "unseen" });

    // Offered again by the other side: B's inbox subscriber gets it.
    const again = await b.next((f) => f.ev === "topic" && f.topic === "inbox");
    expect((again.data as InboxMessage[]).map((m) => m.mid)).toEqual([mid]);
    const message = (again.data as InboxMessage[])[0]!;
    // Its harness gives it to the model this time.
    log.prompt(renderDirectDelivery(message), later + 1000);
    const seen = await receipt(a, `receipts:${A}`, mid, (r) => r.state === "seen");
    expect(seen).toMatchObject({ route: "subscriber", seen_at: later + 1000 });
    log.answer("on it", later + 2000);
    const read = await receipt(a, `receipts:${A}`, mid, (r) => r.state === "read");
    expect(read.read_at).toBe(later + 2000);
    // The socket had it once: nothing was offered to it a second time.
    expect(harness.users).toHaveLength(1);

    // `ccmsg sent` lists it, as A.
    const listed = await runCli(["sent", "--json", "--sid", A], inst.env);
    expect(listed.code, listed.stderr).toBe(0);
    const receipts = (JSON.parse(listed.stdout) as { receipts: Receipt[] }).receipts;
    expect(receipts.find((r) => r.mid === mid)).toMatchObject({ state: "read" });
    a.close();
    b.close();
    await harness.stop();
  }, 60_000);

  it("tells the person when a message offered again is lost again", async () => {
    const [A, B] = [newSid(), newSid()];
    const person = await Peer.unix(inst.socket);
    await person.helloUser();
    await person.call("topic_subscribe", { topic: "notify" });
    const a = await session(A);
    await a.subscribe(`receipts:${A}`);
    const harness = await FakeHarness.start({ configHome: claudeHome, sid: B });
    const b = await session(B);
    const log = transcript(B);
    log.prompt("start", Date.now());
    await b.subscribe("inbox");
    await a.call("message_send", { to: B, text: "lost twice" });
    const [frame] = await harness.taken(1);
    const mid = /ccmsg-mid="([^"]+)"/.exec(frame!.message.content)![1]!;
    const later = Date.now() + 5000;
    log.prompt("next", later);
    log.answer("ok", later + 100);
    await b.next((f) => f.ev === "topic" && f.topic === "inbox");
    // Handed to the subscriber, and again the model goes on without it.
    await receipt(
      a,
      `receipts:${A}`,
      mid,
      (r) => r.state === "delivered" && r.route === "subscriber",
    );
    log.prompt("and next", later + 5000);
    log.answer("ok", later + 5100);
    const note = await person.next((f) => f.ev === "topic" && f.topic === "notify", 20_000);
    const text = (note.data as { text: string }).text;
    expect(text).toContain(mid);
    expect(text).toContain("not seen by its model");
    expect(await receipt(a, `receipts:${A}`, mid, (r) => r.state === "unseen")).toBeDefined();
    person.close();
    a.close();
    b.close();
    await harness.stop();
  }, 60_000);

  it("post --wait seen gives up at its timeout: exit 1 and a line saying what the message is", async () => {
    const [A, B] = [newSid(), newSid()];
    // B greeted once and left: its messages are held, never seen.
    (await session(B)).close();
    const r = await runCli(
      ["post", B, "are you there?", "--wait", "seen:1s", "--text", "--sid", A],
      inst.env,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^ccmsg post: not seen by the recipient's model within 1 s; it is held/,
    );
  });

  it("a session may hold only the receipts of its own sends", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await session(A);
    await expect(a.call("topic_subscribe", { topic: `receipts:${B}` })).rejects.toMatchObject({
      code: "forbidden",
    });
    await expect(a.call("topic_subscribe", { topic: "receipts" })).rejects.toMatchObject({
      code: "forbidden",
    });
    a.close();
  });

  it("with the search index failing, a delivered message stays delivered and says why", async () => {
    const { env } = isolatedHome();
    const failing = await startInstance({ env: { ...env, CCMSG_TEST_SEARCH_INDEX_FULL: "1" } });
    try {
      const home = requiredPath(failing.env, "CLAUDE_CONFIG_DIR");
      const [A, B] = [newSid(), newSid()];
      const a = await Peer.unix(failing.socket);
      await a.helloSession(A);
      const harness = await FakeHarness.start({ configHome: home, sid: B });
      const b = await Peer.unix(failing.socket);
      await b.helloSession(B);
      expect(await a.call("message_send", { to: B, text: "no index" })).toEqual({
        delivered: true,
      });
      const [frame] = await harness.taken(1);
      const mid = /ccmsg-mid="([^"]+)"/.exec(frame!.message.content)![1]!;
      // Once the index has tried to open, the receipt says why none can come.
      let r: Receipt | undefined;
      for (let i = 0; i < 250; i++) {
        r = (await a.call<{ receipts: Receipt[] }>("receipts_read", { mids: [mid] })).receipts[0];
        if (r?.why !== undefined) break;
        await new Promise((res) => setTimeout(res, 20));
      }
      expect(r).toMatchObject({ mid, state: "delivered", route: "socket" });
      expect(r!.why).toMatch(/^no receipt can come: the search index is unavailable/);
      // Another session's receipts are not its to read.
      const b2 = await b.call<{ receipts: Receipt[] }>("receipts_read", { mids: [mid] });
      expect(b2.receipts).toEqual([]);
      a.close();
      b.close();
      await harness.stop();
    } finally {
      await failing.stop();
    }
  }, 30_000);

  it("the MCP send tool with wait answers the receipt once the transcript shows the model got it", async () => {
    const [A, B] = [newSid(), newSid()];
    const harness = await FakeHarness.start({ configHome: claudeHome, sid: B });
    const b = await session(B);
    const log = transcript(B);
    log.prompt("start", Date.now());
    // The harness gives the model what its socket took, as Claude Code does.
    void harness
      .taken(1)
      .then(([frame]) =>
        log.prompt(`Another Claude session sent a message:\n${frame!.message.content}`, Date.now()),
      );
    const mcp = new McpClient({ name: "test-harness", version: "0" });
    await mcp.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "mcp"],
        env: { ...inst.env, CCMSG_STATE_DIR: inst.stateDir, CLAUDE_CODE_SESSION_ID: A },
        stderr: "pipe",
      }),
    );
    try {
      const r = (await mcp.callTool({
        name: "send",
        arguments: { to: B, text: "seen through mcp", wait: 20 },
      })) as { isError?: boolean; content: { text: string }[] };
      expect(r.isError).not.toBe(true);
      const out = JSON.parse(r.content[0]!.text) as {
        delivered: boolean;
        receipt: Receipt;
        seen: boolean;
      };
      expect(out).toMatchObject({ delivered: true, seen: true });
      expect(out.receipt).toMatchObject({ to: B, from: A, route: "socket", state: "seen" });
    } finally {
      await mcp.close();
      b.close();
      await harness.stop();
    }
  }, 60_000);
});

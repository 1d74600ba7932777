import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { InboxMessage } from "../../src/contract/messaging.js";
import { requiredPath } from "../helpers/env.js";
import { ROOT, startInstance, type TestInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";
import { claude } from "../helpers/transcript-records.js";

// Issue 25 item 5: a session's *Message out* is what the instance carried,
// not what a Bash command said. On a real instance: the sender's transcript
// asks for two sends; the one the instance carried is one message:session:out
// with the message's mid, on the topic as it happens and on a read; the one
// the person denied (the result the real Claude Code 2.1.328 wrote) is a
// denied tool call and no message.

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

type Item = { id: string; type: string; [k: string]: unknown };

const DENIED = join(ROOT, "test/fixtures/claude-code/transcripts/2.1.328-denied-reply.jsonl");

let inst: TestInstance;
let person: Peer;
const peers: Peer[] = [];
beforeAll(async () => {
  inst = await startInstance();
  person = await Peer.unix(inst.socket);
  await person.helloUser();
});
afterAll(async () => {
  for (const p of [person, ...peers]) p.client.close();
  await inst.stop();
});

async function session(sid: string): Promise<Peer> {
  const p = await Peer.unix(inst.socket);
  await p.helloSession(sid, { cwd: "/work/out" });
  peers.push(p);
  return p;
}

describe("message:session:out", () => {
  it("is the send the instance carried, with its mid; a denied reply is a denied call and no message", async () => {
    const A = newSid();
    const B = newSid();
    const a = await session(A);
    const b = await session(B);
    const dir = join(requiredPath(inst.env, "CLAUDE_CONFIG_DIR"), "projects", "-work-out");
    mkdirSync(dir, { recursive: true });
    const path = join(dir, `${A}.jsonl`);
    const line = (r: object) => `${JSON.stringify(r)}\n`;
    const now = Date.now();
    // The denied reply, as recorded (its call and result), before A's own send.
    const recorded = readFileSync(DENIED, "utf8").trimEnd().split("\n");
    const denied = recorded.filter((l) => /"tool_use"|"tool_result"/.test(l));
    expect(denied).toHaveLength(2);
    const post = `ccmsg post ${B} 'schema merged, go ahead'`;
    writeFileSync(
      path,
      denied.map((l) => `${l}\n`).join("") +
        line(
          claude.assistant("a-call", now, "msg_a1", [
            claude.toolUse("toolu_a1", "Bash", { command: post }),
          ]),
        ),
    );
    const items = await person.subscribe(`transcript_items:${A}`);
    const shown = (items.data as { items: Item[] }).items;
    // Before its result: the call, and no message yet.
    expect(shown.filter((i) => i.type === "message:session:out")).toEqual([]);

    // A sends; B's inbox has it, and its mid.
    const inbox = b.next((f) => f.topic === "inbox" && (f.data as unknown[]).length > 0);
    await b.call("topic_subscribe", { topic: "inbox" });
    const sent = await a.call<{ delivered: boolean }>("message_send", {
      to: B,
      text: "schema merged, go ahead",
    });
    const [message] = (await inbox).data as InboxMessage[];
    expect(message).toMatchObject({ from: A, text: "schema merged, go ahead" });

    // The call's result comes back: the message out, on the topic as it happens.
    const frame = person.next(
      (f) =>
        f.topic === `transcript_items:${A}` &&
        (f.data as { items: Item[] }).items.some((i) => i.type === "message:session:out"),
    );
    appendFileSync(
      path,
      line(
        claude.result("a-result", Date.now(), "toolu_a1", "delivered", {
          stdout: sent.delivered ? "delivered" : "held (preparing)",
          stderr: "",
          interrupted: false,
        }),
      ),
    );
    const live = (await frame).data as { items: Item[] };
    const out = live.items.find((i) => i.type === "message:session:out")!;
    expect(out).toMatchObject({
      to: B,
      text: "schema merged, go ahead",
      msg_id: message!.mid,
      delivered: sent.delivered,
    });

    // A read says the same: one message out, the denied call marked so.
    const read = await person.call<{ items: Item[]; ids: { kind: string; id: string }[] }>(
      "transcript_items_read",
      { sid: A },
    );
    expect(read.items.filter((i) => i.type === "message:session:out")).toEqual([out]);
    const results = read.items.filter((i) => i.type === "tool:Bash" && i.role === "result");
    expect(results.map((i) => i.failure)).toEqual(["denied", undefined]);
    // Its mid is in the read's ledger; the denied reply's text is nowhere as a message.
    expect(read.ids).toContainEqual(expect.objectContaining({ kind: "msg", id: message!.mid }));
    const said = read.items.filter((i) => i.type.startsWith("message:")).map((i) => i.text);
    expect(said).not.toContain("B here: got your message");
  });
});

import { appendFileSync, copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { renderDirectDelivery } from "../../src/contract/direct-delivery.js";
import type { InboxMessage } from "../../src/contract/messaging.js";
import { requiredPath } from "./env.js";
import { ROOT, type TestInstance } from "./instance.js";
import { Peer } from "./peer.js";
import { claude } from "./transcript-records.js";

// A few exchanges between two sessions on a real instance, for the console's
// timeline (test/e2e/message-out.test.ts) and its screenshots
// (scripts/screenshots.shots.ts). The replier's transcript starts as the real
// Claude Code 2.1.328 wrote it when the person denied its `ccmsg reply`
// ("Did not run 1 call"); then the other session's message arrives, recorded
// as 2.1.328 records one from its messaging socket, and the replier answers
// with a `ccmsg reply` the instance really carries.

const DENIED = join(ROOT, "test/fixtures/claude-code/transcripts/2.1.328-denied-reply.jsonl");
/** The session the fixture was recorded in, and where. */
const REPLIER = "b7963089-04d0-4e6d-8270-5cbf82be9456";
const CWD = "/tmp/rec/run/proj";

export interface Scene {
  replier: string;
  sender: string;
  senderTitle: string;
  incoming: string;
  reply: string;
  /** What the reply's row says became of it. */
  replyStatus: string;
  close(): void;
}

export async function messageScene(inst: TestInstance): Promise<Scene> {
  const sender = "89b6fb5b-a6e9-420a-832c-229bc902061e";
  const senderTitle = "api: schema";
  const incoming = "Schema v2 is merged. Can the claims review go ahead?";
  const reply = "Yes: rebased on v2, the review goes ahead now.";
  const dir = join(requiredPath(inst.env, "CLAUDE_CONFIG_DIR"), "projects", "-tmp-rec-run-proj");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${REPLIER}.jsonl`);
  copyFileSync(DENIED, path);

  const peers: Peer[] = [];
  const hello = async (sid: string, title: string) => {
    const p = await Peer.unix(inst.socket);
    await p.helloSession(sid, { title, repo: "acme/widgets", ws: "widgets", cwd: CWD });
    peers.push(p);
    return p;
  };
  const a = await hello(sender, senderTitle);
  const b = await hello(REPLIER, "review: claims");
  await a.call("topic_subscribe", { topic: "inbox" });

  // A's message, carried to B and recorded in B's transcript.
  const arrived = b.next((f) => f.topic === "inbox" && (f.data as unknown[]).length > 0);
  await b.call("topic_subscribe", { topic: "inbox" });
  await a.call("message_send", { to: REPLIER, text: incoming });
  const [m] = (await arrived).data as InboxMessage[];
  const line = (r: object) => appendFileSync(path, `${JSON.stringify(r)}\n`);
  line({
    ...claude.prompt(
      "scene-in",
      Date.now(),
      `Another Claude session sent a message:\n${renderDirectDelivery({ ...m!, from_label: senderTitle })}\n\nThis came from another Claude session — not typed by your user.`,
    ),
    origin: { kind: "peer" },
  });
  line(claude.assistant("scene-t1", Date.now(), "msg_s1", [{ type: "text", text: "Replying." }]));
  const command = `ccmsg reply ${m!.mid} --to ${sender} '${reply}'`;
  line(
    claude.assistant("scene-call", Date.now(), "msg_s2", [
      claude.toolUse("toolu_scene", "Bash", { command, description: "Answer api" }),
    ]),
  );
  // B's reply, carried by the instance; the call's result says what it answered.
  const sent = await b.call<{ delivered: boolean; reason?: string }>("message_send", {
    to: sender,
    text: reply,
    reply_to: m!.mid,
  });
  const answer = sent.delivered ? "delivered" : `held (${sent.reason})`;
  line(
    claude.result("scene-result", Date.now(), "toolu_scene", answer, {
      stdout: answer,
      stderr: "",
      interrupted: false,
    }),
  );
  line(claude.assistant("scene-t2", Date.now(), "msg_s3", [{ type: "text", text: "Done." }]));
  return {
    replier: REPLIER,
    sender,
    senderTitle,
    incoming,
    reply,
    replyStatus: answer,
    close: () => {
      for (const p of peers) p.close();
    },
  };
}

import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { InboxMessage } from "../../src/contract/messaging.js";
import { deliveriesIn } from "../../src/harness/item-builder.js";
import { LineFramer } from "../../src/net/line-framer.js";
import { socketPath } from "../../src/state/paths.js";
import { isolatedHome, runCli } from "../helpers/instance.js";
import { newSid } from "../helpers/peer.js";

// DR-0050: a consumer whose confirmation the instance never answered (it died
// between recording the hand-over and replying, or before recording it) shows
// the messages once and writes their mids down; offered the same mids again
// after the restart, the next consumer confirms them without showing them
// twice. The instance here is a stand-in speaking the wire format, so the
// crash lands exactly between the confirmation and its answer.

const INSTANCE = "0123456789abcdef0123456789abcdef";

function message(counter: number, text: string): InboxMessage {
  return { mid: `${INSTANCE}/${counter}`, from: "user", from_label: "user", text, sent_at: 1 };
}

/** Answers hello, subscribe (with `held` as the inbox snapshot) and ping; a
 * confirmation is answered, or (`crash`) the connection is cut instead. */
function standIn(path: string, held: InboxMessage[], crash: boolean) {
  const confirmed: string[][] = [];
  const server: Server = createServer((socket: Socket) => {
    const reply = (id: unknown, body: object) =>
      socket.write(`${JSON.stringify({ ok: true, request_id: id, ...body })}\n`);
    const framer = new LineFramer(
      2 ** 20,
      (line) => {
        const f = JSON.parse(line) as { op: string; request_id: string; handed_over?: string[] };
        if (f.op === "hello")
          reply(f.request_id, {
            protocol_version: 3,
            instance: INSTANCE,
            instances: [],
            capabilities: [],
            version: "stand-in",
            started_at: 1,
          });
        else if (f.op === "topic_subscribe") {
          reply(f.request_id, {});
          socket.write(
            `${JSON.stringify({ ev: "topic", topic: "inbox", instance: INSTANCE, snapshot: true, data: held })}\n`,
          );
        } else if (f.op === "topic_unsubscribe") {
          confirmed.push(f.handed_over ?? []);
          if (crash) socket.destroy();
          else reply(f.request_id, { handed_over: f.handed_over ?? [] });
        } else reply(f.request_id, {});
      },
      () => {},
    );
    socket.on("data", (c: Buffer) => framer.push(c));
    socket.on("error", () => {});
  });
  const listening = new Promise<void>((r) => server.listen(path, () => r()));
  return { confirmed, listening, close: () => new Promise((r) => server.close(r)) };
}

const servers: { close: () => Promise<unknown> }[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function hookRun(stateDir: string, env: Record<string, string>, sid: string) {
  const r = await runCli(
    ["inbox", "--hook", "--state-dir", stateDir],
    env,
    JSON.stringify({ session_id: sid, hook_event_name: "UserPromptSubmit", prompt: "go on" }),
  );
  expect(r.code).toBe(0);
  if (r.stdout === "") return [];
  const out = JSON.parse(r.stdout) as { hookSpecificOutput: { additionalContext: string } };
  return deliveriesIn(out.hookSpecificOutput.additionalContext).map((d) => d.text);
}

describe("the shown ledger (a confirmation left unanswered)", () => {
  it("inbox --hook shows the messages once across the crash, and confirms them again", async () => {
    const { root, env } = isolatedHome();
    const stateDir = join(root, "sd");
    mkdirSync(stateDir, { mode: 0o700 });
    const sid = newSid();
    const one = message(7, "first, confirmation unanswered");
    const two = message(8, "second, after the restart");

    const crashing = standIn(socketPath(stateDir), [one], true);
    servers.push(crashing);
    await crashing.listening;
    // The instance may have recorded it: it is shown, and remembered.
    expect(await hookRun(stateDir, env, sid)).toEqual([one.text]);
    expect(crashing.confirmed).toEqual([[one.mid]]);
    await servers.pop()!.close();

    const restarted = standIn(socketPath(stateDir), [one, two], false);
    servers.push(restarted);
    await restarted.listening;
    // Offered again with its mid: confirmed with the new one, shown no more.
    expect(await hookRun(stateDir, env, sid)).toEqual([two.text]);
    expect(restarted.confirmed).toEqual([[one.mid, two.mid]]);
    expect(readdirSync(join(stateDir, "shown"))).toEqual([]);
  });

  it("ccmsg inbox prints what it took although the answer never came, once", async () => {
    const { root, env } = isolatedHome();
    const stateDir = join(root, "sd");
    mkdirSync(stateDir, { mode: 0o700 });
    const sid = newSid();
    const one = message(3, "taken while the instance died");
    const crashing = standIn(socketPath(stateDir), [one], true);
    servers.push(crashing);
    await crashing.listening;
    const first = await runCli(["inbox", "--sid", sid, "--state-dir", stateDir, "--json"], env);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout).messages.map((m: InboxMessage) => m.mid)).toEqual([one.mid]);
    expect(existsSync(join(stateDir, "shown"))).toBe(true);
    await servers.pop()!.close();

    const restarted = standIn(socketPath(stateDir), [one], false);
    servers.push(restarted);
    await restarted.listening;
    const second = await runCli(["inbox", "--sid", sid, "--state-dir", stateDir, "--json"], env);
    expect(JSON.parse(second.stdout)).toEqual({ messages: [] });
    expect(restarted.confirmed).toEqual([[one.mid]]);
  });
});

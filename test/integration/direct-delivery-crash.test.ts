import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { inboxRows } from "../helpers/db.js";
import { requiredPath } from "../helpers/env.js";
import { FakeHarness } from "../helpers/fake-harness.js";
import { startInstance, type TestInstance } from "../helpers/instance.js";
import { newSid, Peer } from "../helpers/peer.js";
import { claude } from "../helpers/transcript-records.js";

// DR-0050: the instance killed while route (a) hands a held message to the
// harness (after the harness took it, before the silence that counts as
// delivered): the session's transcript, where Claude Code records what it
// took, decides — recorded there, it is delivered and never offered again;
// absent, it is offered again with the same msg_id.

const started: TestInstance[] = [];
afterEach(async () => {
  for (const inst of started.splice(0)) await inst.stop().catch(() => {});
});

/** Claude Code 2.1.328's record of a message its socket took (harness §11.1). */
function recordTaken(home: string, sid: string, content: string): void {
  const dir = join(home, "projects", "-work-b");
  mkdirSync(dir, { recursive: true });
  const text = `Another Claude session sent a message:\n${content}\n\nThis came from another Claude session — not typed by your user.`;
  const record = claude.prompt(`u-${Date.now()}`, Date.now(), text);
  appendFileSync(join(dir, `${sid}.jsonl`), `${JSON.stringify({ ...record, sessionId: sid })}\n`);
}

async function session(inst: TestInstance, sid: string): Promise<Peer> {
  const p = await Peer.unix(inst.socket);
  await p.helloSession(sid);
  return p;
}

async function crashDuringHandOver(recorded: boolean) {
  const inst = await startInstance();
  started.push(inst);
  const home = requiredPath(inst.env, "CLAUDE_CONFIG_DIR");
  const [A, B] = [newSid(), newSid()];
  const a = await session(inst, A);
  (await session(inst, B)).close();
  expect(await a.call("message_send", { to: B, text: "held, then handed over" })).toMatchObject({
    delivered: false,
  });
  // B's harness comes back: the held message goes in, and the instance dies
  // inside the window in which it waits for a refusal.
  const harness = await FakeHarness.start({ configHome: home, sid: B });
  await session(inst, B);
  const [frame] = await harness.taken(1);
  if (recorded) recordTaken(home, B, frame!.message.content);
  inst.child.kill("SIGKILL");
  await inst.exited;
  expect(inboxRows(inst.stateDir).map((r) => r.state)).toEqual(["held"]);

  const again = await startInstance({ env: inst.env, stateDir: inst.stateDir });
  started.push(again);
  return { again, harness, B, frame: frame! };
}

describe("a crash while route (a) hands a held message over", () => {
  it("recorded in the transcript: delivered, and never offered to the harness again", async () => {
    const { again, harness, B } = await crashDuringHandOver(true);
    await vi.waitFor(() =>
      expect(inboxRows(again.stateDir).map((r) => r.state)).toEqual(["delivered"]),
    );
    // Live again and subscribing: nothing is offered anywhere.
    const b = await session(again, B);
    expect((await b.subscribe("inbox")).data).toEqual([]);
    expect(harness.users).toHaveLength(1);
    await harness.stop();
  });

  it("not in the transcript: held again and offered once more with the same msg_id", async () => {
    const { again, harness, B, frame } = await crashDuringHandOver(false);
    await session(again, B);
    const [, second] = await harness.taken(2);
    expect(second!.msg_id).toBe(frame.msg_id);
    expect(second!.message.content).toBe(frame.message.content);
    await vi.waitFor(
      () => expect(inboxRows(again.stateDir).map((r) => r.state)).toEqual(["delivered"]),
      { timeout: 10_000 },
    );
    await harness.stop();
  });
});

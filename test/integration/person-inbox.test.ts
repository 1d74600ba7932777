import { afterEach, describe, expect, it } from "vitest";
import { runCli, startInstance, type TestInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Issue 25 item 3 (DR-0056): a reply to a person's message, sent while no
// person watches, is kept, linked to the message it answers, and read later
// by the CLI; its read mark outlives a restart.

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

const started: TestInstance[] = [];
afterEach(async () => {
  for (const i of started.splice(0)) await i.stop();
});

async function instance(from?: TestInstance): Promise<TestInstance> {
  const inst = await startInstance(
    from === undefined ? {} : { stateDir: from.stateDir, env: from.env },
  );
  started.push(inst);
  return inst;
}

const env = (inst: TestInstance, extra: Record<string, string> = {}) => ({
  ...inst.env,
  CCMSG_STATE_DIR: inst.stateDir,
  ...extra,
});

/** The person sends session `sid` a message; the session takes it. */
async function personSays(inst: TestInstance, sid: string, text: string): Promise<string> {
  // The start's compaction forgets delivered messages (and with them what a
  // reply could quote): send after it.
  await inst.compacted();
  const session = await Peer.unix(inst.socket);
  await session.helloSession(sid);
  await session.subscribe("inbox");
  const arrival = session.next((f) => f.topic === "inbox" && !f.snapshot);
  const person = await Peer.unix(inst.socket);
  await person.helloUser();
  await person.call("message_send", { to: sid, text });
  const mid = ((await arrival).data as { mid: string }[])[0]!.mid;
  person.close();
  session.close();
  return mid;
}

describe("the person's inbox", () => {
  it("keeps a session's reply to a person's message, unread and linked, for `ccmsg notifications`", async () => {
    const inst = await instance();
    const A = newSid();
    const mid = await personSays(inst, A, "migrate the schema, then tell me");
    // Nobody watches notify: the reply is kept all the same.
    const r = await runCli(
      ["reply", mid, "done: migrated"],
      env(inst, { CLAUDE_CODE_SESSION_ID: A }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ notified: true, id: expect.any(Number) });

    const json = await runCli(["notifications", "--json"], env(inst));
    expect(json.code, json.stderr).toBe(0);
    const page = JSON.parse(json.stdout);
    expect(page.unread).toBe(1);
    expect(page.notifications).toEqual([
      {
        id: expect.any(Number),
        sid: A,
        sid_label: expect.any(String),
        text: "done: migrated",
        sent_at: expect.any(Number),
        reply_to: mid,
        quote: "migrate the schema, then tell me",
      },
    ]);
    const text = await runCli(["notifications", "--text"], env(inst));
    expect(text.stdout).toContain("● #");
    expect(text.stdout).toContain("done: migrated");
    expect(text.stdout).toContain(`answers mid ${mid}`);
    expect(text.stdout).toContain("> migrate the schema, then tell me");
  });

  it("keeps every notify_send line too, and only the person may read or mark the inbox", async () => {
    const inst = await instance();
    const A = newSid();
    const session = await Peer.unix(inst.socket);
    await session.helloSession(A);
    await session.call("notify_send", { text: "tests are green" });
    for (const [op, args] of [
      ["notifications_read", {}],
      ["notifications_mark_read", { all: true }],
    ] as const) {
      const refused = await session.request(op, args);
      expect(refused.error?.code, op).toBe("forbidden");
    }
    const inside = await runCli(["notifications"], env(inst, { CLAUDE_CODE_SESSION_ID: A }));
    expect(JSON.parse(inside.stderr).error.code).toBe("forbidden");
    const person = await Peer.unix(inst.socket);
    await person.helloUser();
    const page = await person.call<{ notifications: { text: string; sid: string }[] }>(
      "notifications_read",
      { unread: true },
    );
    expect(page.notifications).toMatchObject([{ sid: A, text: "tests are green" }]);
    // Answering a person is a session's act: a person may not.
    expect(
      (await person.request("notify_reply", { reply_to: `${inst.id}/1`, text: "x" })).error?.code,
    ).toBe("forbidden");
    session.close();
    person.close();
  });

  it("a mark read outlives a restart of the instance", async () => {
    const first = await instance();
    const A = newSid();
    const mid = await personSays(first, A, "which port?");
    await runCli(["reply", mid, "7077"], env(first, { CLAUDE_CODE_SESSION_ID: A }));
    await runCli(["reply", mid, "or 7078"], env(first, { CLAUDE_CODE_SESSION_ID: A }));
    const listed = JSON.parse((await runCli(["notifications", "--json"], env(first))).stdout);
    const older = listed.notifications.find((n: { text: string }) => n.text === "7077").id;
    const marked = await runCli(["notifications", "read", String(older)], env(first));
    expect(marked.code, marked.stderr).toBe(0);
    expect(JSON.parse(marked.stdout)).toEqual({ marked: 1, unread: 1 });
    await first.stop();
    started.splice(started.indexOf(first), 1);

    const second = await instance(first);
    const after = JSON.parse((await runCli(["notifications", "--json"], env(second))).stdout);
    expect(after.unread).toBe(1);
    expect(
      after.notifications.map((n: { text: string; read_at?: number }) => [
        n.text,
        n.read_at !== undefined,
      ]),
    ).toEqual([
      ["or 7078", false],
      ["7077", true],
    ]);
    const unread = JSON.parse(
      (await runCli(["notifications", "--unread", "--json"], env(second))).stdout,
    );
    expect(unread.notifications.map((n: { text: string }) => n.text)).toEqual(["or 7078"]);
    const all = await runCli(["notifications", "read", "--all"], env(second));
    expect(JSON.parse(all.stdout)).toEqual({ marked: 1, unread: 0 });
  });
});

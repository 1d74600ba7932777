import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkConfig } from "../../src/config/config.js";
import type { AttentionItem } from "../../src/contract/attention.js";
import { readPermissionRequest } from "../../src/harness/permission-request.js";
import { Attention, type DialogState } from "../../src/instance/attention/engine.js";
import { attentionRow } from "../../src/instance/search/rows.js";
import { TopicHub } from "../../src/instance/topic-hub.js";
import { AttentionStore } from "../../src/store/attention.js";
import { CommitQueue } from "../../src/store/commit-queue.js";
import { Clock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";
import { closeInboxes, openInbox } from "../helpers/db.js";
import { TestClock } from "../helpers/kv-replicas.js";

/** Every queue a test made: stopped (its held items ended) before its
 * file closes, so no timer of it writes to a closed store later. */
const engines: Attention[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((a) => a.stop()));
  closeInboxes();
});

const INSTANCE = "0123456789abcdef0123456789abcdef";
const hooks = join(import.meta.dirname, "..", "fixtures", "claude-code", "hooks");
/** The real 2.1.328 payload of a Bash prompt (DR-0062). */
const bash = () =>
  readPermissionRequest(
    JSON.parse(readFileSync(join(hooks, "permission-request-bash.json"), "utf8")),
  )!;
const PERSON = { role: "user" as const, instance: INSTANCE, via: "console" };

/** The queue on a real SQLite file; `dialog` is what the session's state
 * file would say, set by the test. */
function queue(
  o: {
    holdMs?: number;
    codexHoldMs?: number;
    dir?: string;
    atTerminalMs?: number;
    clock?: Clock;
  } = {},
) {
  const { store, dir } = openInbox(o.dir);
  const records = new AttentionStore(
    store.db,
    new CommitQueue(store.db, dir),
    1000,
    7 * 86_400_000,
  );
  let dialog: DialogState;
  const messaged = new Map<string, number>();
  const ended: AttentionItem[] = [];
  const attention = new Attention({
    ...{ instanceId: INSTANCE, store: records, clock: o.clock ?? new Clock() },
    ...{ hub: new TopicHub(INSTANCE, silentLogger), log: silentLogger },
    holdMs: { claude: o.holdMs ?? 60_000, codex: o.codexHoldMs ?? 60_000 },
    ...{ pollMs: 10, atTerminalMs: o.atTerminalMs ?? 60_000 },
    dialog: async () => dialog,
    label: () => "web-app",
    messagedAt: (sid) => messaged.get(sid),
    ended: (item) => ended.push(item),
  });
  engines.push(attention);
  return {
    attention,
    records,
    dir,
    messaged,
    ended,
    setDialog: (d: DialogState) => {
      dialog = d;
    },
  };
}

/** Until the queue holds one pending item; its id. */
async function pendingId(attention: Attention): Promise<number> {
  for (;;) {
    const page = attention.read({ pending: true });
    if (page.items.length > 0) return page.items[0]!.id;
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("the attention queue (DR-0062)", () => {
  it("holds the hook until a person allows, then answers it with the decision", async () => {
    const { attention } = queue();
    const answer = attention.ask(bash(), "claude", new AbortController().signal);
    const id = await pendingId(attention);
    const item = attention.read({ pending: true }).items[0]!;
    expect(item).toMatchObject({ sid: bash().sid, sid_label: "web-app", tool: "Bash" });
    expect(item.end).toBeUndefined();

    const r = await attention.decide({ sid: bash().sid, id, behavior: "allow" }, PERSON);
    expect(r.outcome).toBe("decided");
    expect(await answer).toEqual({
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } },
    });
    expect(attention.read({}).items[0]).toMatchObject({ end: "allowed", decided_by: PERSON });
    expect(attention.read({ pending: true }).pending).toBe(0);
  });

  it("keeps a plan approval it cannot answer and leaves it to the terminal at once", async () => {
    const { attention } = queue();
    // Claude Code's ExitPlanMode prompt: its input is {}, and only an allow
    // carrying the plan's text approves it.
    const plan = readPermissionRequest({
      ...JSON.parse(readFileSync(join(hooks, "permission-request-bash.json"), "utf8")),
      tool_name: "ExitPlanMode",
      tool_input: {},
    })!;
    expect(await attention.ask(plan, "claude", new AbortController().signal)).toEqual({});
    const [item] = attention.read({}).items;
    expect(item).toMatchObject({ tool: "ExitPlanMode", end: "terminal_only" });
    const late = await attention.decide({ sid: plan.sid, id: item!.id, behavior: "allow" }, PERSON);
    expect(late).toMatchObject({ outcome: "refused", reason: "only the terminal can answer it" });
  });

  it("gives the model a person's deny message", async () => {
    const { attention } = queue();
    const answer = attention.ask(bash(), "claude", new AbortController().signal);
    const id = await pendingId(attention);
    await attention.decide(
      { sid: bash().sid, id, behavior: "deny", message: "open a pull request" },
      PERSON,
    );
    expect(await answer).toMatchObject({
      hookSpecificOutput: { decision: { behavior: "deny", message: "open a pull request" } },
    });
  });

  it("takes the first answer: a second is refused with what won, and both are kept", async () => {
    const { attention } = queue();
    void attention.ask(bash(), "claude", new AbortController().signal);
    const id = await pendingId(attention);
    const [a, b] = await Promise.all([
      attention.decide({ sid: bash().sid, id, behavior: "allow" }, PERSON),
      attention.decide(
        { sid: bash().sid, id, behavior: "deny" },
        { role: "user", instance: INSTANCE, via: "cli" },
      ),
    ]);
    expect([a.outcome, b.outcome]).toEqual(["decided", "refused"]);
    const kept = attention.read({}).items[0]!;
    expect(kept.end).toBe("allowed");
    expect(kept.refused).toEqual([
      expect.objectContaining({ behavior: "deny", by: expect.objectContaining({ via: "cli" }) }),
    ]);
    expect(b.reason).toBeDefined();
  });

  it("ends an item answered in the terminal, and refuses a decision after it", async () => {
    const { attention, setDialog } = queue();
    setDialog({ waiting: true });
    const answer = attention.ask(bash(), "claude", new AbortController().signal);
    const id = await pendingId(attention);
    // The person chose in the terminal: the state file left `waiting`.
    setDialog({ waiting: false, since: Date.now() + 1 });
    expect(await answer).toEqual({});
    expect(attention.read({}).items[0]!.end).toBe("answered_in_terminal");
    const late = await attention.decide({ sid: bash().sid, id, behavior: "allow" }, PERSON);
    expect(late).toMatchObject({ outcome: "refused", reason: "it was answered in the terminal" });
  });

  it("does not take an older status for the terminal's answer", async () => {
    const { attention, setDialog } = queue({ holdMs: 300 });
    // Busy since before the prompt: the dialog has not been drawn yet.
    setDialog({ waiting: false, since: Date.now() - 5000 });
    expect(await attention.ask(bash(), "claude", new AbortController().signal)).toEqual({});
    expect(attention.read({}).items[0]!.end).toBe("timed_out");
  });

  it("holds a Codex prompt for Codex's hold: its dialog waits on the hook", async () => {
    const { attention, setDialog } = queue({ holdMs: 60_000, codexHoldMs: 200 });
    setDialog({ waiting: false, since: Date.now() - 5000 });
    const codex = attention.ask(bash(), "codex", new AbortController().signal);
    const claude = attention.ask(bash(), "claude", new AbortController().signal);
    expect(await codex).toEqual({});
    const [first, second] = attention.read({}).items;
    expect([first!.harness, first!.end]).toEqual(["claude", undefined]);
    expect([second!.harness, second!.end]).toEqual(["codex", "timed_out"]);
    await attention.decide({ sid: bash().sid, id: first!.id, behavior: "deny" }, PERSON);
    expect(await claude).toMatchObject({ hookSpecificOutput: { decision: { behavior: "deny" } } });
  });

  it("answers nothing when its hook goes away, and ends what a stopped instance left", async () => {
    const { attention, dir } = queue();
    const gone = new AbortController();
    const answer = attention.ask(bash(), "claude", gone.signal);
    await pendingId(attention);
    gone.abort();
    expect(await answer).toEqual({});
    expect(attention.read({}).items[0]!.end).toBe("hook_gone");

    // An item still pending when the instance went down.
    void attention.ask(bash(), "claude", new AbortController().signal);
    await pendingId(attention);
    const again = queue({ dir });
    await again.attention.recover();
    expect(again.attention.read({ pending: true }).pending).toBe(0);
    expect(again.attention.read({}).items.map((i) => i.end)).toEqual(["hook_gone", "hook_gone"]);
  });

  it("answers not_found for an id of another session", async () => {
    const { attention } = queue();
    void attention.ask(bash(), "claude", new AbortController().signal);
    const id = await pendingId(attention);
    await expect(
      attention.decide(
        { sid: "00000000-0000-4000-8000-000000000009", id, behavior: "allow" },
        PERSON,
      ),
    ).rejects.toMatchObject({ code: "not_found" });
  });

  it("falls through at once while the person is at the terminal, and holds once they are away", async () => {
    const clock = new TestClock(1_790_000_000_000);
    const { attention, setDialog, ended } = queue({ clock, holdMs: 60_000, atTerminalMs: 60_000 });
    setDialog({ waiting: true });
    const sid = bash().sid;
    // They typed a prompt there 30 s ago: their own dialog is not delayed.
    attention.typed(sid);
    clock.advance(30_000);
    expect(await attention.ask(bash(), "claude", new AbortController().signal)).toEqual({});
    expect(attention.read({}).items[0]).toMatchObject({ end: "at_terminal" });
    expect(ended.map((i) => i.end)).toEqual(["at_terminal"]);

    // 61 s after that prompt they count as away: the hook is held for a decision.
    clock.advance(31_000);
    const answer = attention.ask(bash(), "claude", new AbortController().signal);
    const id = await pendingId(attention);
    await attention.decide({ sid, id, behavior: "allow" }, PERSON);
    expect(await answer).toMatchObject({ hookSpecificOutput: { decision: { behavior: "allow" } } });
  });

  it("takes a dialog answered in the terminal for the person being there", async () => {
    const clock = new TestClock(1_790_000_000_000);
    const { attention, setDialog } = queue({ clock });
    setDialog({ waiting: true });
    const first = attention.ask(bash(), "claude", new AbortController().signal);
    await pendingId(attention);
    setDialog({ waiting: false, since: clock.now() + 1 });
    expect(await first).toEqual({});
    setDialog({ waiting: true });
    clock.advance(5000);
    expect(await attention.ask(bash(), "claude", new AbortController().signal)).toEqual({});
    expect(attention.read({}).items.map((i) => i.end)).toEqual([
      "at_terminal",
      "answered_in_terminal",
    ]);
  });

  it("does not take the person's message typed in by ccmsg for them being at the terminal", async () => {
    const clock = new TestClock(1_790_000_000_000);
    const { attention, messaged } = queue({ clock });
    const sid = bash().sid;
    messaged.set(sid, clock.now());
    clock.advance(2000);
    attention.typed(sid);
    const answer = attention.ask(bash(), "claude", new AbortController().signal);
    const id = await pendingId(attention);
    await attention.decide({ sid, id, behavior: "deny" }, PERSON);
    expect(await answer).toMatchObject({ hookSpecificOutput: { decision: { behavior: "deny" } } });
  });

  it("never falls through early with the window off", async () => {
    const { attention } = queue({ atTerminalMs: 0 });
    attention.typed(bash().sid);
    const answer = attention.ask(bash(), "claude", new AbortController().signal);
    const id = await pendingId(attention);
    await attention.decide({ sid: bash().sid, id, behavior: "allow" }, PERSON);
    expect(await answer).toMatchObject({ hookSpecificOutput: { decision: { behavior: "allow" } } });
  });
});

describe("the attention queue's config and record (DR-0062)", () => {
  it("reads attention.hold_seconds, codex_hold_seconds and at_terminal_seconds, and names a wrong key", () => {
    const attention = { hold_seconds: 30, codex_hold_seconds: 20, at_terminal_seconds: 0 };
    expect(checkConfig({ attention }, "c.json")).toEqual({ attention });
    expect(() => checkConfig({ attention: { codex_hold_seconds: 0 } }, "c.json")).toThrow(
      "attention.codex_hold_seconds: must be a number of seconds from 1 to 86400",
    );
    expect(() => checkConfig({ attention: { hold: 30 } }, "c.json")).toThrow(
      "config c.json: attention.hold: unknown key",
    );
    expect(() => checkConfig({ attention: { hold_seconds: 0 } }, "c.json")).toThrow(
      "attention.hold_seconds: must be a number of seconds from 1 to 86400",
    );
  });

  it("indexes an item by its tool, its command, its end and who decided", () => {
    const row = attentionRow({
      id: 4,
      instance: INSTANCE,
      sid: bash().sid,
      harness: "claude",
      kind: "permission",
      tool: "Bash",
      input: '{"command":"npm publish"}',
      asked_at: 1_790_000_000_000,
      end: "allowed",
      ended_at: 1_790_000_005_000,
      decided_by: {
        role: "session",
        sid: "7c1d0e52-93a4-4f4e-8b1a-2f6d5c0e9a31",
        instance: INSTANCE,
        via: "mcp",
      },
    });
    expect(row).toMatchObject({
      sid: bash().sid,
      type: "attention:permission",
      at: 1_790_000_005_000,
      item: `attention:${INSTANCE}:4`,
    });
    expect(row.text).toBe(
      `Bash {"command":"npm publish"} — allowed by session 7c1d0e52-93a4-4f4e-8b1a-2f6d5c0e9a31 (mcp) on ${INSTANCE}`,
    );
  });
});

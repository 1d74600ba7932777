import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { InboxMessage } from "../../src/contract/messaging.js";
import { openDatabase } from "../../src/store/database.js";
import { migrate } from "../../src/store/migrate.js";
import { MIGRATIONS } from "../../src/store/migrations/index.js";
import { closeInboxes, openInbox } from "../helpers/db.js";

// Migration 0015 (DR-0063) rewrites every inbox row into the compact table:
// what was stored must read back the same, through SQL and through the store.

const dirs: string[] = [];
afterEach(() => {
  closeInboxes();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const INSTANCE = "0123456789abcdef0123456789abcdef";
const A = "00000000-0000-4000-8000-00000000000a";
const B = "00000000-0000-4000-8000-00000000000b";
const T = 1_796_000_000_000;
const DAY = 24 * 3600 * 1000;

const msg = (counter: number, extra: Partial<InboxMessage> = {}): InboxMessage => ({
  mid: `${INSTANCE}/${counter}`,
  from: B,
  from_label: "repo/ws",
  text: `message ${counter}`,
  sent_at: T + counter,
  ...extra,
});

interface OldRow {
  counter: number;
  sid: string;
  state: string;
  message: InboxMessage;
  [column: string]: unknown;
}

/** Rows as a version-14 file holds them: every state, every stamp. */
const OLD_ROWS: OldRow[] = [
  // held, nothing else
  { counter: 1, sid: A, state: "held", message: msg(1) },
  // held and in flight when the instance died (in doubt)
  { counter: 2, sid: A, state: "held", message: msg(2), offered_at: T + 5 },
  // delivered, seen and read: a full receipt, a reply to another mid
  {
    counter: 3,
    sid: A,
    state: "delivered",
    message: msg(3, { reply_to: `${INSTANCE}/1`, from: "user", from_label: "user" }),
    settled_at: T + 10,
    route: "socket",
    seen_at: T + 20,
    read_at: T + 30,
  },
  // lost once on the direct route: held again for the lane only
  {
    counter: 4,
    sid: B,
    state: "held",
    message: msg(4, { from: A, text: 'quotes " \\ and\nlines, ünïcödé, 🙂' }),
    unseen: "the session moved on without it",
    avoid: "direct",
  },
  // dropped by the limit
  { counter: 5, sid: A, state: "dropped", message: msg(5), settled_at: T + 40 },
  // a text only JSON could carry (a lone surrogate) and a mid of another shape
  {
    counter: 6,
    sid: B,
    state: "delivered",
    message: msg(6, { text: "half \ud83d a pair" }),
    settled_at: T + 50,
    route: "typed",
  },
  {
    counter: 7,
    sid: B,
    state: "delivered",
    message: msg(7, { mid: `${INSTANCE}/70` }),
    settled_at: T + 60,
    route: "subscriber",
    unseen: "no envelope in the transcript",
  },
];

const COLUMNS = [
  "counter",
  "sid",
  "state",
  "message",
  "sent_at",
  "settled_at",
  "offered_at",
  "seen_at",
  "read_at",
  "route",
  "unseen",
  "avoid",
] as const;

/** A state dir whose ccmsg.db is at version 14 with `OLD_ROWS`. */
function version14(rows = OLD_ROWS): string {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-inbox-migration-"));
  dirs.push(dir);
  const db = openDatabase(join(dir, "ccmsg.db"));
  migrate(
    db,
    MIGRATIONS.filter((m) => m.version <= 14),
  );
  const insert = db.prepare(
    `INSERT INTO inbox (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")})`,
  );
  for (const r of rows) {
    const row: Record<string, unknown> = { sent_at: r.message.sent_at, ...r };
    row.message = JSON.stringify(r.message);
    insert.run(...COLUMNS.map((c) => row[c] ?? null));
  }
  db.close();
  return dir;
}

function readInbox(dir: string) {
  const db = new Database(join(dir, "ccmsg.db"), { readonly: true });
  try {
    return {
      version: db.pragma("user_version", { simple: true }),
      rows: (
        db.prepare(`SELECT ${COLUMNS.join(", ")} FROM inbox ORDER BY counter`).all() as Record<
          string,
          unknown
        >[]
      ).map((r) => ({ ...r, message: JSON.parse(r.message as string) })),
    };
  } finally {
    db.close();
  }
}

describe("migration 0015: compact inbox rows", () => {
  it("rewrites held, delivered, receipted and dropped rows so they read back the same", async () => {
    const dir = version14();
    const before = readInbox(dir);
    expect(before.version).toBe(14);
    expect(before.rows).toHaveLength(OLD_ROWS.length);

    const { store, inbox } = openInbox(dir);
    const after = readInbox(dir);
    expect(after.version).toBe(MIGRATIONS.at(-1)!.version);
    expect(after.rows).toEqual(before.rows);
    // The old table is gone: its rows live in the compact one.
    const tables = store.db
      .prepare("SELECT name, type FROM sqlite_schema WHERE name LIKE 'inbox%' ORDER BY name")
      .all();
    expect(tables).toContainEqual({ name: "inbox", type: "view" });
    expect(tables).toContainEqual({ name: "inbox_rows", type: "table" });

    // The store reads them as it stored them.
    const byCounter = (c: number) => OLD_ROWS.find((r) => r.counter === c)!.message;
    expect(inbox.inDoubtMessages()).toEqual([{ sid: A, counter: 2, message: byCounter(2) }]);
    expect(inbox.peekHeld(A, T, 7 * DAY)).toEqual([{ counter: 1, message: byCounter(1) }]);
    expect(inbox.peekHeld(B, T, 7 * DAY)).toEqual([{ counter: 4, message: byCounter(4) }]);
    expect(inbox.heldBySid(T, 7 * DAY)).toEqual({ [A]: 2, [B]: 1 });
    expect(inbox.messageTo(B, 6)).toEqual(byCounter(6));
    expect(inbox.messageTo(A, 6)).toBeUndefined();
    expect(inbox.highestCounter()).toBe(7);
    const receipts = inbox.receiptRows([3, 6, 7]);
    expect(receipts.map((r) => [r.counter, r.sid, r.state, r.route, r.seen_at, r.read_at])).toEqual(
      [
        [3, A, "delivered", "socket", T + 20, T + 30],
        [6, B, "delivered", "typed", null, null],
        [7, B, "delivered", "subscriber", null, null],
      ],
    );
    expect(receipts.map((r) => r.message)).toEqual([byCounter(3), byCounter(6), byCounter(7)]);
    expect(inbox.recentReceipts("user", 10).map((r) => r.counter)).toEqual([3]);
    expect(inbox.sentBetween(A, T, T + 10, 10)).toEqual([{ to: B, message: byCounter(4) }]);

    // And go on from there: a new row beside the migrated ones.
    await inbox.hold(A, 8, msg(8, { from: A }), 256, 7 * DAY);
    await inbox.settleDelivered(A, [1], T + 70, "hook");
    const last = readInbox(dir).rows;
    expect(last.at(-1)).toMatchObject({
      counter: 8,
      sid: A,
      state: "held",
      message: msg(8, { from: A }),
    });
    expect(last[0]).toMatchObject({ state: "delivered", route: "hook", settled_at: T + 70 });
  });

  it("leaves a file it could not convert as it was (one transaction)", () => {
    // A route no code is known for: the conversion stops at that row.
    const dir = version14([
      ...OLD_ROWS.slice(0, 3),
      { counter: 9, sid: A, state: "delivered", message: msg(9), route: "pigeon" },
    ]);
    const before = readInbox(dir);
    expect(() => openInbox(dir)).toThrow(/unknown route pigeon/);
    const after = readInbox(dir);
    expect(after.version).toBe(14);
    expect(after.rows).toEqual(before.rows);
    const db = new Database(join(dir, "ccmsg.db"), { readonly: true });
    expect(db.prepare("SELECT type FROM sqlite_schema WHERE name = 'inbox'").pluck().get()).toBe(
      "table",
    );
    expect(
      db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'inbox_rows'").pluck().get(),
    ).toBe(0);
    db.close();
  });

  it("stores what only JSON could carry as JSON, and reads it back the same", async () => {
    const { inbox } = openInbox();
    const odd = msg(1, { text: "a lone \udc00 half", from_label: "label \ud800" });
    await inbox.hold(A, 1, odd, 256, 7 * DAY);
    await inbox.recordDelivered(B, 2, msg(2), "codex");
    expect(inbox.peekHeld(A, T, 7 * DAY)).toEqual([{ counter: 1, message: odd }]);
    expect(inbox.receiptRows([2]).map((r) => [r.route, r.message])).toEqual([["codex", msg(2)]]);
  });
});

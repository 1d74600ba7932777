import type { InboxMessage } from "../../contract/messaging.js";
import type { ReceiptRoute } from "../../contract/receipts.js";
import type { Db } from "../database.js";
import type { Migration } from "../migrate.js";

// Compact inbox rows (DR-0063). A row was ~270 bytes for a 9-character
// text: a 36-character sid twice, a 32-character instance id, a sender's
// label and the JSON keys on every row. Now each of those strings is a
// number into `inbox_names`, the state and route are small integers, and the
// message's fields are columns (a state of 0 or 1 takes no byte at all in
// SQLite's record). `inbox` stays, as a view of the old shape, for readers
// that want rows as they were (the search index's import, `ccmsg` tooling,
// tests); the store writes and reads `inbox_rows` itself.

/** `inbox_rows.state`. */
export const INBOX_STATE = { held: 0, delivered: 1, dropped: 2 } as const;

/** `inbox_rows.route`: a route's code, fixed once given (a new route needs a
 * code here and a migration that redefines the view). */
export const ROUTE_CODE: Record<ReceiptRoute, number> = {
  socket: 1,
  codex: 2,
  waiter: 3,
  hook: 4,
  subscriber: 5,
  typed: 6,
};

const name = (column: string) => `(SELECT name FROM inbox_names WHERE id = r.${column})`;

/** A row's state as text, over `inbox_rows r`. */
export const STATE_SQL =
  "CASE r.state WHEN 0 THEN 'held' WHEN 1 THEN 'delivered' ELSE 'dropped' END";

/** A row's route as text, over `inbox_rows r`. */
export const ROUTE_SQL = `CASE r.route ${Object.entries(ROUTE_CODE)
  .map(([route, code]) => `WHEN ${code} THEN '${route}'`)
  .join(" ")} END`;

/** A row's message as the JSON it was sent as, over `inbox_rows r`: its own
 * `message` when it did not fit the columns, else built from them (a
 * `reply_to` only when it has one: a merge patch drops a null). */
export const MESSAGE_SQL = `coalesce(r.message, json_patch(json_object(
  'mid', ${name("origin")} || '/' || r.counter, 'from', ${name("sender")},
  'from_label', ${name("label")}, 'text', r.text, 'sent_at', r.sent_at),
  json_object('reply_to', r.reply_to)))`;

/** The recipient's sid, over `inbox_rows r`. */
export const SID_SQL = name("sid");

/** The names of a message's row, and its `message` column: the whole JSON
 * when the columns cannot carry it exactly — a mid not `<instance>/<counter>`,
 * a field that is not what the contract says, or a string that is not
 * well-formed UTF-16 (a lone surrogate survives JSON's escapes, not a
 * TEXT column). The store never writes such a message; a migrated row
 * might be one. */
export function rowFields(
  counter: number,
  sentAt: number,
  m: InboxMessage,
): {
  origin: string | null;
  sender: string;
  label: string;
  text: string;
  reply_to: string | null;
  message: string | null;
} {
  const object = typeof m === "object" && m !== null && !Array.isArray(m);
  const slash = object && typeof m.mid === "string" ? m.mid.lastIndexOf("/") : -1;
  const keys = object ? Object.keys(m) : [];
  const fits =
    slash > 0 &&
    m.sent_at === sentAt &&
    m.mid.slice(slash + 1) === String(counter) &&
    typeof m.from === "string" &&
    typeof m.from_label === "string" &&
    typeof m.text === "string" &&
    Number.isSafeInteger(m.sent_at) &&
    (m.reply_to === undefined || typeof m.reply_to === "string") &&
    keys.length === (m.reply_to === undefined ? 5 : 6) &&
    keys.every((k) => KEYS.has(k)) &&
    !LONE_SURROGATE.test(m.from_label) &&
    !LONE_SURROGATE.test(m.text) &&
    !LONE_SURROGATE.test(m.from) &&
    !LONE_SURROGATE.test(m.mid) &&
    (m.reply_to === undefined || !LONE_SURROGATE.test(m.reply_to));
  if (fits) {
    return {
      origin: m.mid.slice(0, slash),
      sender: m.from,
      label: m.from_label,
      text: m.text,
      reply_to: m.reply_to ?? null,
      message: null,
    };
  }
  return {
    origin: null,
    sender: String(m?.from),
    label: String(m?.from_label),
    text: "",
    reply_to: null,
    message: JSON.stringify(m),
  };
}

const LONE_SURROGATE = /\p{Cs}/u;
const KEYS = new Set(["mid", "from", "from_label", "text", "reply_to", "sent_at"]);

/** A row in the old shape (the `inbox` view's). */
export interface LegacyInboxRow {
  counter: number;
  sid: string;
  state: string;
  message: string;
  sent_at: number;
  settled_at?: number | null;
  offered_at?: number | null;
  seen_at?: number | null;
  read_at?: number | null;
  route?: string | null;
  unseen?: string | null;
  avoid?: string | null;
}

/**
 * Write rows given in the old shape into `inbox_rows`, their names into
 * `inbox_names` (inside the caller's transaction). The migration's own
 * conversion; tests and benchmarks fill a file through it too.
 */
export function putLegacyRows(db: Db, rows: Iterable<LegacyInboxRow>): void {
  const ids = new Map<string, number | bigint>();
  const find = db.prepare("SELECT id FROM inbox_names WHERE name = ?").pluck();
  const add = db.prepare("INSERT INTO inbox_names (name) VALUES (?)");
  const id = (n: string) => {
    let known = ids.get(n);
    if (known === undefined) {
      known = (find.get(n) as number | undefined) ?? add.run(n).lastInsertRowid;
      ids.set(n, known);
    }
    return known;
  };
  const insert = db.prepare(
    `INSERT INTO inbox_rows (counter, sid, state, origin, sender, label, text, sent_at,
       settled_at, route, reply_to, offered_at, seen_at, read_at, unseen, avoid, message)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const r of rows) {
    const state = INBOX_STATE[r.state as keyof typeof INBOX_STATE];
    if (state === undefined) throw new Error(`inbox row ${r.counter}: unknown state ${r.state}`);
    const route = r.route == null ? null : ROUTE_CODE[r.route as ReceiptRoute];
    if (route === undefined) throw new Error(`inbox row ${r.counter}: unknown route ${r.route}`);
    const f = rowFields(r.counter, r.sent_at, JSON.parse(r.message) as InboxMessage);
    insert.run(
      r.counter,
      id(r.sid),
      state,
      f.origin === null ? null : id(f.origin),
      id(f.sender),
      id(f.label),
      f.text,
      r.sent_at,
      r.settled_at ?? null,
      route,
      f.reply_to,
      r.offered_at ?? null,
      r.seen_at ?? null,
      r.read_at ?? null,
      r.unseen ?? null,
      r.avoid ?? null,
      f.message,
    );
  }
}

/** Rows converted per read: the old table is read in slices by counter. */
const SLICE = 5000;

export const m0015InboxCompact: Migration = {
  version: 15,
  name: "inbox-compact",
  up(db) {
    db.exec(`
      -- The strings rows refer to: sids, senders, their labels, instance ids.
      CREATE TABLE inbox_names (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
      CREATE TABLE inbox_rows (
        counter INTEGER PRIMARY KEY,
        -- the recipient (inbox_names)
        sid INTEGER NOT NULL,
        -- 0 held, 1 delivered, 2 dropped
        state INTEGER NOT NULL CHECK (state IN (0, 1, 2)),
        -- the mid's instance (inbox_names): the mid is <origin>/<counter>
        origin INTEGER,
        -- from and from_label (inbox_names)
        sender INTEGER NOT NULL,
        label INTEGER NOT NULL,
        text TEXT NOT NULL,
        sent_at INTEGER NOT NULL,
        settled_at INTEGER,
        -- the route's code (ROUTE_CODE)
        route INTEGER,
        reply_to TEXT,
        offered_at INTEGER,
        seen_at INTEGER,
        read_at INTEGER,
        unseen TEXT,
        avoid TEXT,
        -- the whole message, only when the columns cannot carry it (rowFields)
        message TEXT CHECK (message IS NULL OR json_valid(message))
      );
    `);
    const slice = db.prepare("SELECT * FROM inbox WHERE counter > ? ORDER BY counter LIMIT ?");
    let after = 0;
    for (;;) {
      const rows = slice.all(after, SLICE) as LegacyInboxRow[];
      if (rows.length === 0) break;
      putLegacyRows(db, rows);
      after = rows.at(-1)!.counter;
    }
    // Dropping the table drops its four indexes; their successors below.
    // `inbox_sent_at` becomes (sender, sent_at): the one query that reads it
    // asks for one sender's sends in a time range.
    db.exec(`
      DROP TABLE inbox;
      CREATE INDEX inbox_held ON inbox_rows (sid, counter) WHERE state = 0;
      CREATE INDEX inbox_held_age ON inbox_rows (sent_at) WHERE state = 0;
      CREATE INDEX inbox_offered ON inbox_rows (counter) WHERE offered_at IS NOT NULL AND state = 0;
      CREATE INDEX inbox_sent ON inbox_rows (sender, sent_at);
      CREATE VIEW inbox AS SELECT r.counter, ${SID_SQL} AS sid, ${STATE_SQL} AS state,
        ${MESSAGE_SQL} AS message, r.sent_at, r.settled_at, r.offered_at, r.seen_at,
        r.read_at, ${ROUTE_SQL} AS route, r.unseen, r.avoid
      FROM inbox_rows r;
    `);
  },
};

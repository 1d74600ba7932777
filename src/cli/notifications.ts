import { callAs, connectInstance } from "../client/connect.js";
import { sessionId, UsageError } from "../client/flags.js";
import type { StoredNotification } from "../contract/notifications.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";

const USAGE = "ccmsg notifications [--unread] [--limit n] | notifications read <id…>|--all";

/**
 * `ccmsg notifications` — the person's inbox (DR-0056): what sessions told
 * the person, newest first, kept by the instance whether or not anyone
 * watched; `notifications read <id…>|--all` marks them read. The person's
 * alone: run inside a session it is refused (`forbidden`).
 */
export const notifications: Command = async (argv) => {
  const { values, positionals } = parse(
    argv,
    { unread: { type: "boolean" }, all: { type: "boolean" }, limit: { type: "string" } },
    USAGE,
  );
  const [sub, ...ids] = positionals;
  if (sub === "read") return markRead(values, ids);
  if (sub !== undefined) throw new UsageError(`unknown subcommand ${sub}: ${USAGE}`);
  if (values.all) throw new UsageError(`--all goes with read: ${USAGE}`);
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 200))
    throw new UsageError("--limit: a whole number from 1 to 200");
  const client = await connectInstance(values);
  const page = await callAs(client, sessionId(values), "notifications_read", {
    ...(values.unread ? { unread: true } : {}),
    ...(limit === undefined ? {} : { limit }),
  });
  client.close();
  print(values, page, () => {
    const lines = page.notifications.map(line);
    if (lines.length === 0) lines.push(values.unread ? "nothing unread" : "no notifications");
    if (page.more) lines.push("(older ones follow: raise --limit)");
    lines.push(`${page.unread} unread`);
    return lines.join("\n");
  });
};

async function markRead(values: { sid?: string; all?: boolean }, words: string[]): Promise<void> {
  if (values.all === words.length > 0)
    throw new UsageError("notifications read: give the ids to mark, or --all");
  const ids = words.map((w) => Number(w));
  if (ids.some((id) => !Number.isInteger(id) || id < 1))
    throw new UsageError("notifications read: ids are whole numbers, as the list shows them");
  const client = await connectInstance(values);
  const r = await callAs(
    client,
    sessionId(values),
    "notifications_mark_read",
    values.all ? { all: true } : { ids },
  );
  client.close();
  print(values, r, () => `${r.marked} marked read, ${r.unread} unread`);
}

/** `● #12  2026-11-30 10:00  widgets/main  done: migrated  (answers mid …/41)` */
function line(n: StoredNotification): string {
  const at = new Date(n.sent_at).toISOString().slice(0, 16).replace("T", " ");
  const mark = n.read_at === undefined ? "●" : " ";
  const answers = n.reply_to === undefined ? "" : `  (answers mid ${n.reply_to})`;
  const text = n.text.replace(/\s+/g, " ");
  const quote = n.quote === undefined ? "" : `\n        > ${n.quote.replace(/\s+/g, " ")}`;
  return `${mark} #${n.id}  ${at}  ${n.sid_label}  ${text}${answers}${quote}`;
}

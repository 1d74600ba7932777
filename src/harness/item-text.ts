import type { ItemDraft } from "./item-builder.js";

// The words of a typed transcript item, for the search index (DR-0037): every
// string a person could look for — what was said, the command run, the path
// read, what came back — and none of the ids, offsets and flags that only
// link items together. One rule for every type, so an item type a classifier
// coins tomorrow is searchable the day it appears.

/** Text kept per item at most: its head and its tail (a long tool output's
 * end is often the error a person looks for). */
export const MAX_ITEM_TEXT_CHARS = 32 * 1024;
const TAIL_CHARS = 8 * 1024;

/** Fields that are links, counts and flags, never words. */
const NOT_WORDS = new Set([
  "id",
  "uuid",
  "source",
  "type",
  "at",
  "turn",
  "role",
  "result_item",
  "parent_item",
  "tool_use_id",
  "msg_id",
  "reply_to",
  "task_id",
  "cron_id",
  "agent_id",
  // How a call ended and what the instance answered a send: states, not words.
  "failure",
  "reason",
]);

/** Keys of a raw record or attachment that are bookkeeping, not content. */
const RAW_NOISE = new Set([
  "uuid",
  "parentUuid",
  "sessionId",
  "timestamp",
  "version",
  "gitBranch",
  "cwd",
  "userType",
  "requestId",
  "messageId",
  "toolUseID",
  "signature",
  "type",
  "isSidechain",
  "id",
]);

/** How deep a raw object is walked for strings. */
const MAX_DEPTH = 8;

/** The searchable text of one item (possibly empty). */
export function itemText(item: ItemDraft): string {
  const parts: string[] = [];
  let size = 0;
  const take = (s: string) => {
    if (s === "" || size > MAX_ITEM_TEXT_CHARS * 2) return;
    parts.push(s);
    size += s.length + 1;
  };
  const walk = (value: unknown, depth: number, raw: boolean) => {
    if (typeof value === "string") take(value);
    else if (depth >= MAX_DEPTH || typeof value !== "object" || value === null) return;
    else if (Array.isArray(value)) for (const v of value) walk(v, depth + 1, raw);
    else
      for (const [k, v] of Object.entries(value))
        if (!(raw && RAW_NOISE.has(k))) walk(v, depth + 1, raw);
  };
  for (const [key, value] of Object.entries(item)) {
    if (NOT_WORDS.has(key)) continue;
    walk(value, 0, key === "record" || key === "attachment");
  }
  return fitText(parts.join("\n"));
}

/** Text as the index stores it: control characters other than tab and
 * newline removed (snippet markers are control characters), and a long text
 * cut to its head and tail. */
export function fitText(text: string): string {
  const clean = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, " ");
  if (clean.length <= MAX_ITEM_TEXT_CHARS) return clean;
  const head = MAX_ITEM_TEXT_CHARS - TAIL_CHARS - 1;
  return `${clean.slice(0, head)}…${clean.slice(clean.length - TAIL_CHARS)}`;
}

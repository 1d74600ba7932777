import { connectInstance } from "../client/connect.js";
import { UsageError } from "../client/flags.js";
import type { SearchAnswer, SearchHit } from "../contract/search.js";
import { resolveStateDir, stateFiles } from "../state/paths.js";
import { openSearchReader } from "../store/search-index.js";
import { parseSince, runSearch, type SearchArgs } from "../store/search-query.js";
import type { Command } from "./command.js";
import { parse, print, wantsJson } from "./options.js";
import { sidArg } from "./sid-args.js";

const USAGE = "ccmsg search <query> [--sid s] [--since t] [--type t] [--limit n]";

/**
 * `ccmsg search <query>` — everything any session said, was sent or raised,
 * from the search index (DR-0037). The instance keeps the index (one is
 * started when none runs, so it is being kept); this reads its file
 * directly, read-only, like `ccmsg board` reads the store.
 */
export const search: Command = async (argv) => {
  const { values, positionals } = parse(
    argv,
    {
      since: { type: "string" },
      type: { type: "string" },
      limit: { type: "string" },
    },
    USAGE,
  );
  const q = positionals.join(" ");
  if (q.trim() === "") throw new UsageError(`a query is needed: ${USAGE}`);
  const args: SearchArgs = { q };
  // A prefix of any sid the index holds is the index's to match (sessions
  // long gone included); a title is looked up like every other sid argument.
  if (values.sid !== undefined)
    args.sid = isSidFilter(values.sid)
      ? values.sid
      : await sidArg(values, values.sid, "the session (--sid)");
  if (values.since !== undefined) args.since = parseSince(values.since, Date.now());
  if (values.type !== undefined) args.type = values.type;
  if (values.limit !== undefined) {
    const n = Number(values.limit);
    if (!Number.isInteger(n) || n < 1) throw new UsageError("--limit: a whole number ≥ 1");
    args.limit = n;
  }
  // The index is the instance's: make sure one runs and keeps it.
  (await connectInstance(values)).close();
  const db = openSearchReader(stateFiles(resolveStateDir(values["state-dir"])).search);
  let answer: SearchAnswer;
  try {
    answer = db === undefined ? { hits: [], more: false, indexing: true } : runSearch(db, args);
  } finally {
    db?.close();
  }
  const bold = !wantsJson(values) && process.stdout.isTTY && !process.env.NO_COLOR;
  print(values, answer, () => answerText(answer, bold));
};

/** Hex digits and dashes: a sid or a prefix, which the index matches. */
const isSidFilter = (typed: string) => /^[0-9a-fA-F-]*[0-9a-fA-F][0-9a-fA-F-]*$/.test(typed);

function answerText(answer: SearchAnswer, bold: boolean): string {
  const lines = answer.hits.map((h) => hitLine(h, bold));
  if (lines.length === 0) lines.push("no matches");
  if (answer.more) lines.push("(more matched: narrow the query, or raise --limit)");
  if (answer.indexing)
    lines.push("(the index is still reading transcripts: results may be incomplete)");
  return lines.join("\n");
}

/** `2026-11-30 10:00  3f1c9a52  message:user:in  …the *claim* button…` */
function hitLine(h: SearchHit, bold: boolean): string {
  const at = new Date(h.at).toISOString().slice(0, 16).replace("T", " ");
  const who =
    h.type === "message" && h.from !== undefined
      ? `${short(h.from)}→${short(h.sid)}`
      : `${short(h.sid)}${h.agent_id === undefined ? "" : `/${h.agent_id.slice(0, 8)}`}`;
  let snippet = "";
  let from = 0;
  for (const [start, end] of h.highlights) {
    const word = h.snippet.slice(start, end);
    snippet += h.snippet.slice(from, start) + (bold ? `\x1b[1m${word}\x1b[22m` : `*${word}*`);
    from = end;
  }
  snippet += h.snippet.slice(from);
  return `${at}  ${who}  ${h.type}  ${snippet.replace(/\s+/g, " ").trim()}`;
}

const short = (sid: string) => (sid === "user" ? "user" : sid.slice(0, 8));

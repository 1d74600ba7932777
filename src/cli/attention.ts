import { callAs, connectInstance } from "../client/connect.js";
import { sessionId, UsageError } from "../client/flags.js";
import type { AttentionDecideArgs, AttentionItem } from "../contract/attention.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";

const USAGE =
  "ccmsg attention [--all] [--limit n] | attention allow <id> [--always] [--answer <question>=<label>…] | attention deny <id> [--message m]";

/**
 * `ccmsg attention` — the attention queue (DR-0062): what sessions wait on
 * the person for (permission prompts, questions), oldest pending first;
 * `allow` / `deny` decide one. The harness's own dialog stays up in its
 * terminal meanwhile: whichever answer comes first wins. The person's alone.
 */
export const attention: Command = async (argv) => {
  const { values, positionals } = parse(
    argv,
    {
      all: { type: "boolean" },
      limit: { type: "string" },
      always: { type: "boolean" },
      message: { type: "string" },
      answer: { type: "string", multiple: true },
    },
    USAGE,
  );
  const [sub, idWord, ...rest] = positionals;
  if (sub === undefined) return list(values);
  if (sub !== "allow" && sub !== "deny")
    throw new UsageError(`unknown subcommand ${sub}: ${USAGE}`);
  if (rest.length > 0) throw new UsageError(`one id at a time: ${USAGE}`);
  const id = Number(idWord);
  if (!Number.isInteger(id) || id < 1)
    throw new UsageError(`attention ${sub}: the item's id, as the list shows it after #`);
  if (sub === "deny" && (values.always || values.answer !== undefined))
    throw new UsageError("--always and --answer go with allow");
  if (sub === "allow" && values.message !== undefined)
    throw new UsageError("--message goes with deny (the model receives it)");
  // `multiple`: parseArgs gives an array, which the shared Values type
  // does not spell.
  const answerWords = values.answer as unknown as string[] | undefined;
  const answers = answerWords === undefined ? undefined : answerPairs(answerWords);
  const client = await connectInstance(values);
  const caller = sessionId(values);
  // The decision names the item's session (it is forwarded to its instance).
  const found = await callAs(client, caller, "attention_read", { before: id + 1, limit: 1 });
  const item = found.items.find((i) => i.id === id);
  if (item === undefined) {
    client.close();
    throw new UsageError(`no attention item #${id} here (ccmsg attention --all lists them)`);
  }
  const args: AttentionDecideArgs = {
    sid: item.sid,
    id,
    behavior: sub,
    via: "cli",
    ...(values.message === undefined ? {} : { message: values.message }),
    ...(values.always ? { always: true as const } : {}),
    ...(answers === undefined ? {} : { answers }),
  };
  // Greeted already, by the read.
  const r = await client.call("attention_decide", args).finally(() => client.close());
  print(values, r, () =>
    r.outcome === "decided"
      ? `#${id} ${r.item.end}: ${r.item.sid_label ?? r.item.sid} goes on`
      : `#${id} not decided: ${r.reason}`,
  );
  if (r.outcome === "refused") process.exitCode = 1;
};

async function list(values: { all?: boolean; limit?: string; sid?: string }): Promise<void> {
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 200))
    throw new UsageError("--limit: a whole number from 1 to 200");
  const client = await connectInstance(values);
  const page = await callAs(client, sessionId(values), "attention_read", {
    ...(values.all ? {} : { pending: true }),
    ...(limit === undefined ? {} : { limit }),
  });
  client.close();
  print(values, page, () => {
    // Oldest pending first: the one waiting longest is answered first.
    const items = values.all ? page.items : [...page.items].reverse();
    const lines = items.map(line);
    if (lines.length === 0) lines.push(values.all ? "nothing asked" : "nothing waits on you");
    if (page.more) lines.push("(more follow: raise --limit)");
    lines.push(`${page.pending} pending`);
    return lines.join("\n");
  });
}

/** `--answer "Which color?=Blue"`: question text → label. */
function answerPairs(words: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const w of words) {
    const at = w.lastIndexOf("=");
    if (at <= 0 || at === w.length - 1)
      throw new UsageError(`--answer: <question>=<label>, not ${JSON.stringify(w)}`);
    out[w.slice(0, at)] = w.slice(at + 1);
  }
  return out;
}

/** `● #3  10:02  web-app  Bash  {"command":"npm publish"}` (● pending). */
function line(i: AttentionItem): string {
  const at = new Date(i.asked_at).toISOString().slice(11, 16);
  const mark = i.end === undefined ? "●" : " ";
  const what =
    i.kind === "question"
      ? (i.questions ?? [])
          .map((q) => `${q.question} [${q.options.map((o) => o.label).join(" | ")}]`)
          .join("; ")
      : i.input;
  const end = i.end === undefined ? "" : `  → ${i.end.replaceAll("_", " ")}`;
  return `${mark} #${i.id}  ${at}  ${i.sid_label ?? i.sid}  ${i.tool}  ${what}${end}`;
}

import { callAs, connectInstance, greet } from "../client/connect.js";
import { sessionId, UsageError } from "../client/flags.js";
import { wholeSid } from "../client/sid-resolve.js";
import type { AttentionDecideArgs, AttentionItem } from "../contract/attention.js";
import { ContractError } from "../contract/errors.js";
import { attentionHook } from "./attention-hook.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";

const USAGE =
  "ccmsg attention --hook [--harness claude|codex] | attention [--all] [--limit n] | attention allow <id> [--instance i] [--always] [--answer <question>=<label>…] | attention deny <id> [--instance i] [--message m] | attention grant|revoke <sid> | attention grants";

/**
 * `ccmsg attention` — the attention queue (DR-0062): what sessions wait on
 * the person for (permission prompts, questions), oldest pending first;
 * `allow` / `deny` decide one. The harness's own dialog stays up in its
 * terminal meanwhile: whichever answer comes first wins. The list takes in
 * every linked instance's items; a decision goes to the instance that holds
 * the item. The person's alone, or a session's they granted it: `grant`,
 * `revoke` and `grants` are the person's grants.
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
      instance: { type: "string" },
      hook: { type: "boolean" },
      harness: { type: "string" },
    },
    USAGE,
  );
  const [sub, idWord, ...rest] = positionals;
  if (values.hook) {
    const harness = values.harness ?? "claude";
    if ((harness !== "claude" && harness !== "codex") || sub !== undefined)
      throw new UsageError(`attention --hook: ${USAGE}`);
    return attentionHook(values, harness);
  }
  if (values.harness !== undefined) throw new UsageError("--harness goes with --hook");
  if (sub === undefined) return list(values);
  if (sub === "grant" || sub === "revoke" || sub === "grants")
    return grants(sub, [idWord, ...rest], values);
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
  // The decision names the item's session and goes to the instance that
  // holds it; ids are each instance's own, so the item is looked up on all.
  const found = await callAs(client, caller, "attention_read", {
    before: id + 1,
    limit: 1,
    scope: "mesh",
  });
  const wanted = values.instance;
  const matches = found.items.filter(
    (i) => i.id === id && (wanted === undefined || i.instance.startsWith(wanted)),
  );
  const item = matches[0];
  if (item === undefined || matches.length > 1) {
    client.close();
    const missed = (found.unread ?? []).filter(
      (u) => wanted === undefined || u.instance.startsWith(wanted),
    );
    if (item === undefined && missed.length > 0)
      throw new ContractError(
        "instance_unreachable",
        `#${id} not found; not read: ${missed.map((u) => `${u.instance} (${u.reason})`).join(", ")}`,
      );
    throw new UsageError(
      item === undefined
        ? `no attention item #${id} (ccmsg attention --all lists them)`
        : `#${id} is on ${matches.length} instances: name one with --instance (${matches.map((i) => i.instance.slice(0, 8)).join(", ")})`,
    );
  }
  const args: AttentionDecideArgs & { to_instance: string } = {
    to_instance: item.instance,
    sid: item.sid,
    id,
    behavior: sub,
    via: "cli",
    ...(values.message === undefined ? {} : { message: values.message }),
    ...(values.always ? { always: true as const } : {}),
    ...(answers === undefined ? {} : { answers }),
  };
  // Greeted already, by the read. `to_instance`: the envelope field that
  // carries it to the item's instance (contract §8).
  const r = await client
    .call("attention_decide", args as AttentionDecideArgs)
    .finally(() => client.close());
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
  const hello = await greet(client, sessionId(values)).catch((error: unknown) => {
    client.close();
    throw error;
  });
  const page = await client
    .call("attention_read", {
      ...(values.all ? {} : { pending: true }),
      ...(limit === undefined ? {} : { limit }),
      scope: "mesh",
    })
    .finally(() => client.close());
  const here = hello.instance;
  print(values, page, () => {
    // Oldest pending first: the one waiting longest is answered first.
    const items = values.all ? page.items : [...page.items].reverse();
    const lines = items.map((i) => line(i, here));
    for (const u of page.unread ?? []) lines.push(`(not read: ${u.instance} — ${u.reason})`);
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

/** The person's grants: `grant <sid>`, `revoke <sid>`, `grants`. */
async function grants(
  sub: "grant" | "revoke" | "grants",
  words: (string | undefined)[],
  values: { sid?: string },
): Promise<void> {
  const named = words.filter((w): w is string => w !== undefined);
  if (sub === "grants" ? named.length > 0 : named.length !== 1)
    throw new UsageError(`attention ${sub}: ${USAGE}`);
  const client = await connectInstance(values);
  const caller = sessionId(values);
  try {
    if (sub === "grants") {
      const r = await callAs(client, caller, "attention_grants", {});
      return print(values, r, () =>
        r.grants.length === 0
          ? "no session may answer the attention queue but you"
          : r.grants
              .map(
                (g) =>
                  `${g.sid}${g.sid_label === undefined ? "" : `  ${g.sid_label}`}  since ${new Date(g.granted_at).toISOString().slice(0, 16).replace("T", " ")}`,
              )
              .join("\n"),
      );
    }
    const grantee = wholeSid(named[0]!);
    if (grantee === undefined) throw new UsageError(`attention ${sub}: a whole session id`);
    if (sub === "grant") {
      const r = await callAs(client, caller, "attention_grant", { grantee });
      return print(
        values,
        r,
        () =>
          `${r.grant.sid_label ?? grantee} may now read and decide other sessions' prompts (never its own); ccmsg attention revoke ${grantee} takes it back`,
      );
    }
    const r = await callAs(client, caller, "attention_revoke", { grantee });
    print(values, r, () =>
      r.revoked ? `${grantee} may no longer answer prompts` : `${grantee} held no grant`,
    );
  } finally {
    client.close();
  }
}

/** `● #3  10:02  web-app  Bash  {"command":"npm publish"}` (● pending); an
 * item of another instance shows its instance after the id. */
function line(i: AttentionItem, here?: string): string {
  const at = new Date(i.asked_at).toISOString().slice(11, 16);
  const mark = i.end === undefined ? "●" : " ";
  const what =
    i.kind === "question"
      ? (i.questions ?? [])
          .map((q) => `${q.question} [${q.options.map((o) => o.label).join(" | ")}]`)
          .join("; ")
      : i.input;
  const end = i.end === undefined ? "" : `  → ${i.end.replaceAll("_", " ")}`;
  const where = here === undefined || i.instance === here ? "" : `@${i.instance.slice(0, 8)}`;
  return `${mark} #${i.id}${where}  ${at}  ${i.sid_label ?? i.sid}  ${i.tool}  ${what}${end}`;
}

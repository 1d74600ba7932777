import { callAs, connectInstance, greet } from "../client/connect.js";
import { sessionId } from "../client/flags.js";
import { claimForHarness } from "../client/hook-payload.js";
import { derivedMeta, sessionCwd } from "../client/session-meta.js";
import { ContractError } from "../contract/errors.js";
import type { SessionMeta } from "../contract/peers.js";
import type { OpArgs } from "../contract/schemas.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";
import { sendWaitingSeen } from "./receipts.js";
import { sidArg } from "./sid-args.js";
import { hookSid, payloadString, readStdinJson } from "./stdin.js";

const HOOK_DEADLINE_MS = 3000;

/** A hook's outcome, for whoever reads the hook's log. Claude Code parses
 * JSON on stdout and ignores fields it does not know; Codex (`--harness
 * codex`) fails a hook whose JSON is not its own output shape and gives plain
 * text to the model, so there it goes to stderr. */
function hookOutcome(values: { harness?: string }, outcome: object): never {
  const out = values.harness === "codex" ? process.stderr : process.stdout;
  out.write(`${JSON.stringify(outcome)}\n`);
  process.exit(0);
}

/** `ccmsg hello` — greet as this session, announcing where it works. With
 * `--hook` it reads the SessionStart payload on stdin and never fails the
 * hook: it prints `{ greeted: false, reason }` instead. */
export const hello: Command = async (argv) => {
  const { values } = parse(
    argv,
    {
      hook: { type: "boolean" },
      harness: { type: "string" },
      cwd: { type: "string" },
      repo: { type: "string" },
      ws: { type: "string" },
      "repo-root": { type: "string" },
      branch: { type: "string" },
      "transcript-path": { type: "string" },
      title: { type: "string" },
    },
    "ccmsg hello [--hook [--harness codex]] [--cwd d] [--repo r] [--ws w] [--repo-root d] [--branch b] [--transcript-path p] [--title t]",
  );
  const run = async () => {
    const { payload, sid } = await hookSession(values, "hello");
    const meta: SessionMeta = await derivedMeta(
      sessionCwd(values.cwd, payloadString(payload, "cwd")),
    );
    const given = {
      repo: values.repo,
      ws: values.ws,
      repo_root: values["repo-root"],
      branch: values.branch,
      transcript_path: values["transcript-path"] ?? (payload.transcript_path as string | undefined),
      title: values.title,
    };
    for (const [k, v] of Object.entries(given))
      if (v !== undefined) meta[k as keyof SessionMeta] = v;
    const client = await connectInstance(values);
    const reply = await greet(client, sid, meta);
    client.close();
    return { sid, instance: reply.instance as string };
  };
  if (!values.hook) {
    const r = await run();
    print(values, { greeted: true, ...r }, () => `greeted as ${r.sid} on instance ${r.instance}`);
    return;
  }
  // A SessionStart hook must never block or fail the session.
  const outcome = await Promise.race([
    run().then(
      (r) => ({ greeted: true, ...r }),
      (e: Error) => ({ greeted: false, reason: e.message }),
    ),
    new Promise<{ greeted: false; reason: string }>((r) =>
      setTimeout(() => r({ greeted: false, reason: "timed out" }), HOOK_DEADLINE_MS).unref(),
    ),
  ]);
  hookOutcome(values, outcome);
};

/** `ccmsg stopping` — declare this session is about to stop, so its
 * disconnection reads as a pause rather than a loss. It never starts an
 * instance: with none running there is no connection to read as a loss, so
 * nothing to tell (`--hook` says so and exits 0; otherwise
 * `instance_unreachable`). */
export const stopping: Command = async (argv) => {
  const { values } = parse(
    argv,
    { reason: { type: "string" }, hook: { type: "boolean" }, harness: { type: "string" } },
    "ccmsg stopping [--reason r] [--hook [--harness codex]]",
  );
  const run = async () => {
    const { payload, sid } = await hookSession(values, "stopping");
    const reason = values.reason ?? (payload.reason as string | undefined);
    // Nothing to record when no instance runs: never start one for this.
    const client = await connectInstance(values, { start: false });
    const meta = await derivedMeta(sessionCwd(undefined, payloadString(payload, "cwd")));
    const r = await callAs(client, sid, "session_stopping", reason ? { reason } : {}, meta);
    client.close();
    return r;
  };
  if (!values.hook) {
    const r = await run();
    print(values, r, () => `stopping recorded at ${new Date(r.stopped_at).toISOString()}`);
    return;
  }
  const outcome = await run().then(
    (r) => ({ stopped: true, ...r }),
    (e: Error) => ({ stopped: false, reason: e.message }),
  );
  hookOutcome(values, outcome);
};

/** `ccmsg post <sid> <text>` — send as this session (or as the person). */
export const post: Command = async (argv) => {
  const { values, positionals } = parse(
    argv,
    { wait: { type: "string" } },
    "ccmsg post <sid> <text> [--wait seen[:timeout]]",
  );
  const [to, ...words] = positionals;
  if (to === undefined || words.length === 0)
    throw new ContractError("invalid_args", "usage: ccmsg post <sid> <text>");
  const args = { to: await sidArg(values, to, "the recipient"), text: words.join(" ") };
  if (values.wait !== undefined) return sendWaitingSeen(values, args, values.wait, "post");
  await send(values, args);
};

/** `ccmsg reply <mid> [--to <sid>] <text>` — answer a delivered message. The
 * reply line of a message from a person has no `--to`: the answer goes to the
 * person's inbox linked to `<mid>` (DR-0056), and as a notification about
 * this session. */
export const reply: Command = async (argv) => {
  const { values, positionals } = parse(
    argv,
    { to: { type: "string" }, wait: { type: "string" } },
    "ccmsg reply <mid> [--to <sid>] <text> [--wait seen[:timeout]]",
  );
  const [mid, ...words] = positionals;
  if (mid === undefined || words.length === 0)
    throw new ContractError("invalid_args", "usage: ccmsg reply <mid> [--to <sid>] <text>");
  const text = words.join(" ");
  if (values.to !== undefined) {
    const to = await sidArg(values, values.to, "the recipient (--to)");
    if (values.wait !== undefined)
      return sendWaitingSeen(values, { to, text, reply_to: mid }, values.wait, "reply");
    await send(values, { to, text, reply_to: mid });
    return;
  }
  if (values.wait !== undefined)
    throw new ContractError(
      "invalid_args",
      "--wait seen needs --to: a person's answer has no receipt",
    );
  const sid = sessionId(values);
  if (sid === undefined) {
    throw new ContractError(
      "invalid_args",
      "reply without --to answers a person as a session: run it inside a session or pass --sid",
    );
  }
  const client = await connectInstance(values);
  const r = await callAs(client, sid, "notify_reply", { reply_to: mid, text }).catch(
    (error: unknown) => {
      // An instance of a build without the extension: the answer still goes,
      // unlinked.
      if (!(error instanceof ContractError && error.code === "unknown_op")) throw error;
      return callAs(client, sid, "notify_send", { text }).then(() => undefined);
    },
  );
  client.close();
  print(values, { notified: true, ...(r === undefined ? {} : { id: r.id }) }, () =>
    r === undefined
      ? "sent to the person as a notification"
      : `sent to the person (notification #${r.id}, answering ${mid})`,
  );
};

async function send(
  values: Parameters<typeof sessionId>[0],
  args: OpArgs<"message_send">,
): Promise<void> {
  const client = await connectInstance(values);
  const as = sessionId(values);
  const r = await callAs(client, as, "message_send", args);
  client.close();
  print(values, r, () => {
    // A person's words: typed as theirs, or framed as a peer's (DR-0055).
    if (r.typed !== undefined) return typedText(r.typed);
    if (r.delivered)
      return as === undefined
        ? "delivered as a message: Claude Code shows it as from another session"
        : "delivered";
    const lines = [`held (${r.reason})`];
    for (const c of r.candidates ?? [])
      lines.push(`  live in the same repository: ${c.sid}${c.ws ? ` (${c.ws})` : ""}`);
    return lines.join("\n");
  });
}

function typedText(typed: "confirmed" | "unconfirmed"): string {
  return typed === "confirmed"
    ? "typed into the session as you"
    : "typed into the session as you; not yet seen in its transcript (not sent again)";
}

/** `ccmsg notify <text> [--about <sid>]` — a best-effort line for the person. */
export const notify: Command = async (argv) => {
  const { values, positionals } = parse(
    argv,
    { about: { type: "string" } },
    "ccmsg notify <text> [--about <sid>]",
  );
  if (positionals.length === 0)
    throw new ContractError("invalid_args", "usage: ccmsg notify <text> [--about <sid>]");
  // A notification is about a session: the caller, or the one named.
  const sid = sessionId(values);
  if (sid === undefined && values.about === undefined) {
    throw new ContractError(
      "invalid_args",
      "notify tells the person about a session: run it inside a session (or pass --sid <sid>), or name the session with --about <sid>",
    );
  }
  const about =
    values.about === undefined
      ? {}
      : { sid: await sidArg(values, values.about, "the session the line is about (--about)") };
  const client = await connectInstance(values);
  const text = positionals.join(" ");
  await callAs(client, sid, "notify_send", { text, ...about });
  client.close();
  print(values, {}, () => "sent");
};

/** The hook payload (with `--hook`) and the session it speaks for: `--sid`,
 * else the payload's `session_id`, else the environment's session. */
async function hookSession(
  values: { hook?: boolean; sid?: string; harness?: string },
  command: string,
): Promise<{ payload: Record<string, unknown>; sid: string }> {
  const payload = values.hook ? await readStdinJson(HOOK_DEADLINE_MS) : {};
  if (values.hook) claimForHarness(values.harness, payload);
  const sid = hookSid(values, payload);
  if (sid === undefined) {
    throw new ContractError(
      "invalid_args",
      `${command} needs a session: --sid, or run it inside a session`,
    );
  }
  return { payload, sid };
}

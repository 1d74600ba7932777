import type { Client } from "../client/client.js";
import { connectInstance, greet, sendGreeting } from "../client/connect.js";
import { type Flags, sessionId } from "../client/flags.js";
import { confirmPassedOn, splitShown, subscribeHandOver } from "../client/hand-over.js";
import { promptHookAnswer } from "../client/hook-answers.js";
import { claimForHarness } from "../client/hook-payload.js";
import { takeInbox } from "../client/snapshots.js";
import { ContractError } from "../contract/errors.js";
import type { InboxMessage } from "../contract/messaging.js";
import {
  ADDITIONAL_CONTEXT_MAX_CHARS,
  fitMessages,
  WAITER_HOOK_TIMEOUT_S,
} from "../harness/hook-delivery.js";
import { parentPid, processStart } from "../probes/process.js";
import { resolveStateDir } from "../state/paths.js";
import { ShownLedger } from "../state/shown-ledger.js";
import type { Command } from "./command.js";
import { parse, wantsJson } from "./options.js";
import { hookSid, readStdinJson } from "./stdin.js";

// Taking what is held for a session: `ccmsg inbox`, and the hooks that put
// messages in front of the model (harness spec §2.7) — `ccmsg wait --hook`,
// the waiter run as an asyncRewake hook, and `ccmsg inbox --hook` for
// UserPromptSubmit (and Codex's Stop). All claim messages and confirm them only
// once passed on (DR-0024), so a hook killed on the way leaves them held —
// never lost, never delivered twice.

const STDIN_DEADLINE_MS = 3000;
/** After the first message, how long the waiter gathers more for one wake. */
const GATHER_MS = 10;
/** The waiter leaves this long before its hook timeout. */
const TIMEOUT_MARGIN_S = 60;
/** How often the waiter checks that its harness still runs. */
const ANCESTOR_CHECK_MS = 2000;
/** How long the waiter tries to reach an instance that went away. */
const RECONNECT_FOR_MS = 30_000;
/** `inbox --hook` answers within this, or says nothing. */
const INBOX_HOOK_DEADLINE_MS = 3000;

type Ending = { kind: "messages"; client: Client; messages: InboxMessage[] } | { kind: "quit" };

/** `ccmsg inbox` — take what is held for this session (subscribing is
 * receiving: what is printed has left the inbox). */
export const inbox: Command = async (argv) => {
  const { values } = parse(
    argv,
    { hook: { type: "boolean" }, harness: { type: "string" } },
    "ccmsg inbox [--hook [--harness codex]]",
  );
  if (values.hook) return inboxHook(values, values.harness);
  const sid = sessionId(values);
  if (sid === undefined)
    throw new ContractError(
      "invalid_args",
      "inbox needs a session: --sid, or run it inside a session",
    );
  const client = await connectInstance(values);
  const { reply: greeting } = await sendGreeting(client, sid);
  const taking = takeInbox(client, ShownLedger.of(values, sid));
  // When the greeting is refused the subscription fails too; report the greeting.
  taking.catch(() => {});
  await greeting;
  const messages = await taking;
  client.close();
  if (wantsJson(values)) {
    process.stdout.write(`${JSON.stringify({ messages })}\n`);
    return;
  }
  if (messages.length === 0) process.stdout.write("no messages\n");
  for (const m of messages) process.stdout.write(`[${m.mid}] ${m.from_label}: ${m.text}\n`);
};

/**
 * `ccmsg wait` — wait for messages to this session and pass them on. With
 * `--hook` (an asyncRewake hook) they go to stderr in the direct-delivery
 * wording and the exit status is 2, which wakes the session; it exits 0 in
 * silence when superseded by a newer waiter, when the session stops or its
 * harness goes, or before the hook's timeout. Without `--hook` they are
 * printed and it exits 0.
 */
export const wait: Command = async (argv) => {
  const { values } = parse(
    argv,
    { hook: { type: "boolean" }, "max-wait": { type: "string" } },
    "ccmsg wait [--hook] [--max-wait <seconds>]",
  );
  const quit = (status: number): never => process.exit(status);
  const payload = values.hook ? await readStdinJson(STDIN_DEADLINE_MS).catch(() => ({})) : {};
  const sid = hookSid(values, payload);
  if (sid === undefined) {
    if (values.hook) quit(0);
    throw new ContractError("invalid_args", "wait needs a session: --sid, or run it inside one");
  }
  // A print-mode run (`claude -p`, the Agent SDK) ends after its result, and
  // Claude Code waits ~30 s for background hooks before it exits: a waiter
  // would hold every such run. Its messages wait for its next prompt, or come
  // through its messaging socket (route a).
  if (values.hook && unattended(process.env)) quit(0);
  const maxWait = Number(values["max-wait"] ?? WAITER_HOOK_TIMEOUT_S - TIMEOUT_MARGIN_S);
  if (!Number.isFinite(maxWait) || maxWait <= 0)
    throw new ContractError("invalid_args", "--max-wait takes a number of seconds > 0");

  const ending = await waitForMessages(values, sid, Date.now() + maxWait * 1000, !!values.hook);
  if (ending.kind === "quit") quit(0);
  const { client, messages } = ending as Extract<Ending, { kind: "messages" }>;
  const ledger = ShownLedger.of(values, sid);
  const { fresh, shown } = await splitShown(messages, ledger);
  // Only messages shown before a crash: confirmed, and nothing to wake for.
  if (fresh.length === 0) {
    await confirmPassedOn(client, fresh, shown, ledger);
    quit(0);
  }
  const { text, included } = fitMessages(fresh, ADDITIONAL_CONTEXT_MAX_CHARS, true);
  if (values.hook) {
    // Written before the confirmation: a waiter killed in between exits by a
    // signal, and the harness ignores a hook that did not exit 2. A refused
    // confirmation (they are held again) exits 0: the harness ignores the
    // text. Unanswered, the text stands and the ledger remembers it.
    await write(process.stderr, `${text}\n`);
    const outcome = await confirmPassedOn(client, included, shown, ledger);
    quit(outcome === "refused" ? 0 : 2);
  }
  const out = wantsJson(values) ? `${JSON.stringify({ messages: included })}\n` : `${text}\n`;
  await write(process.stdout, out);
  if ((await confirmPassedOn(client, included, shown, ledger)) === "refused")
    throw new ContractError(
      "internal_error",
      "the messages could not be recorded as delivered; they stay held",
    );
  quit(0);
};

/**
 * Hold a hand-over subscription as `sid` until messages are claimed for it,
 * reconnecting when the instance restarts. Ends with the messages (the
 * connection still open, to confirm them) or with a reason to quit.
 */
async function waitForMessages(
  flags: Flags,
  sid: string,
  deadline: number,
  hook: boolean,
): Promise<Ending> {
  const ancestors = hook ? await harnessAncestors() : [];
  let start = true;
  let reconnectUntil = Date.now() + RECONNECT_FOR_MS;
  while (Date.now() < deadline) {
    let client: Client;
    try {
      client = await connectInstance(flags, { start });
      start = false;
    } catch (error) {
      if (start && !hook) throw error;
      start = false;
      if (Date.now() > reconnectUntil) return { kind: "quit" };
      await sleep(500);
      continue;
    }
    const ending = await waitOn(client, sid, deadline, ancestors);
    if (ending !== "lost") return ending;
    reconnectUntil = Date.now() + RECONNECT_FOR_MS;
  }
  return { kind: "quit" };
}

/** One connection's wait: messages, a reason to quit, or `lost` (the
 * instance went away or restarts: try again). */
function waitOn(
  client: Client,
  sid: string,
  deadline: number,
  ancestors: Ancestor[],
): Promise<Ending | "lost"> {
  return new Promise((resolve) => {
    const timers: NodeJS.Timeout[] = [];
    let done = false;
    const finish = (ending: Ending | "lost") => {
      if (done) return;
      done = true;
      for (const t of timers) clearTimeout(t);
      if (ending !== "lost" && ending.kind === "quit") client.close();
      resolve(ending);
    };
    const gathered: InboxMessage[] = [];
    client.onPushed((p) => {
      if (p.ev === "subscribe_superseded") finish({ kind: "quit" });
      else if (p.ev === "restarting") {
        client.close();
        finish("lost");
      }
    });
    client.onClose(() => finish("lost"));
    timers.push(setTimeout(() => finish({ kind: "quit" }), Math.max(0, deadline - Date.now())));
    if (ancestors.length > 0) {
      const check = async () => {
        if (!(await ancestorsAlive(ancestors))) return finish({ kind: "quit" });
        if (!done) timers.push(setTimeout(check, ANCESTOR_CHECK_MS));
      };
      timers.push(setTimeout(check, ANCESTOR_CHECK_MS));
    }
    greet(client, sid, {})
      .then(() =>
        subscribeHandOver(client, "wait", (messages) => {
          if (messages.length === 0 || done) return;
          if (gathered.length === 0)
            timers.push(
              setTimeout(() => finish({ kind: "messages", client, messages: gathered }), GATHER_MS),
            );
          gathered.push(...messages);
        }),
      )
      .catch(() => finish(client.closed ? "lost" : { kind: "quit" }));
  });
}

/**
 * `ccmsg inbox --hook` (UserPromptSubmit, and Codex's Stop): what
 * promptHookAnswer gives, on stdout. Prints nothing when nothing is held;
 * never fails the prompt.
 */
async function inboxHook(flags: Flags, harness: string | undefined): Promise<void> {
  const quiet = () => process.exit(0);
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    quiet();
  }, INBOX_HOOK_DEADLINE_MS);
  try {
    const payload = await readStdinJson(STDIN_DEADLINE_MS).catch(() => ({}));
    claimForHarness(harness, payload);
    const told = harness === "codex" ? tellPromptTyped(flags, payload) : undefined;
    // Confirmed first: the output is acted on only after a clean exit, and
    // the process exits right after writing it. The deadline no longer
    // applies once confirming: what is confirmed — or may have been,
    // unanswered — must be written (DR-0050).
    const out = await promptHookAnswer(flags, payload, () => {
      clearTimeout(timer);
      return !late;
    });
    if (out !== undefined) await write(process.stdout, `${JSON.stringify(out)}\n`);
    await told;
  } catch {
    // The instance is away or refused: the prompt goes on without messages.
  }
  quiet();
}

/** Codex's prompt hooks are commands only, so the instance hears from its
 * UserPromptSubmit through the hook route what Claude Code's http hook tells
 * it: a prompt typed at the terminal, whose person is there (DR-0062). The
 * Stop hook shares the script and tells nothing. Never fails the hook. */
async function tellPromptTyped(flags: Flags, payload: Record<string, unknown>): Promise<void> {
  if (payload.hook_event_name !== "UserPromptSubmit") return;
  const [{ postToHookRoute }, { CODEX_HOOK_PATH }] = await Promise.all([
    import("../client/hook-route-post.js"),
    import("../harness/plugin/claude-paths.js"),
  ]);
  await postToHookRoute(resolveStateDir(flags["state-dir"]), CODEX_HOOK_PATH, payload);
}

/** Whether Claude Code runs this session without a person at a terminal
 * (unofficial variables, verified with 2.1.328; absent on older builds, which
 * then count as attended). */
function unattended(env: NodeJS.ProcessEnv): boolean {
  return (
    env.CLAUDE_CODE_SESSION_ATTENDED === "0" || (env.CLAUDE_CODE_ENTRYPOINT ?? "").startsWith("sdk")
  );
}

function write(stream: NodeJS.WriteStream, text: string): Promise<void> {
  return new Promise((resolve) => stream.write(text, () => resolve()));
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

interface Ancestor {
  pid: number;
  start: string;
}

/** The hook's parent and grandparent (a shell, then the harness — or the
 * harness, then its terminal): when either goes, so has the session. */
async function harnessAncestors(): Promise<Ancestor[]> {
  const out: Ancestor[] = [];
  let pid = process.ppid;
  for (let i = 0; i < 2 && pid > 1; i++) {
    const start = await processStart(pid);
    if (start === undefined) break;
    out.push({ pid, start });
    pid = (await parentPid(pid)) ?? 0;
  }
  return out;
}

async function ancestorsAlive(ancestors: Ancestor[]): Promise<boolean> {
  for (const a of ancestors) if ((await processStart(a.pid)) !== a.start) return false;
  return true;
}

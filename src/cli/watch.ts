import { Client } from "../client/client.js";
import { connectInstance, greet, sendGreeting } from "../client/connect.js";
import { type Flags, sessionId } from "../client/flags.js";
import { derivedMeta } from "../client/session-meta.js";
import { topicSnapshot } from "../client/snapshots.js";
import type { AgentsData } from "../contract/agents.js";
import { BUSY_WINDOW_MS, isBusy } from "../contract/busy.js";
import { ContractError } from "../contract/errors.js";
import type { LastLiveSession, PeerInfo, SessionMeta } from "../contract/peers.js";
import { TOPIC_ATTRIBUTES, type TopicAttributes, type TopicKind } from "../contract/topics.js";
import { readSessionLlm } from "../state/llm-session-file.js";
import { resolveStateDir, stateFiles } from "../state/paths.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";
import { sidArg } from "./sid-args.js";

type PeersData = { peers: PeerInfo[]; last_live: LastLiveSession[] };

/** `ccmsg peers` — the sessions live now and those lately lost. Greets as
 * the session when one is known, so rows answer for this session. */
export const peers: Command = async (argv) => {
  const { values } = parse(argv, {}, "ccmsg peers");
  const client = await connectInstance(values);
  const { reply: greeting } = await sendGreeting(client, sessionId(values));
  const reading = topicSnapshot<PeersData>(client, "peers");
  // When the greeting is refused the subscription fails too; report the greeting.
  reading.catch(() => {});
  await greeting;
  const data = await reading;
  client.close();
  print(values, data, () => {
    const lines: string[] = [];
    const row = (
      sid: string,
      state: string | undefined,
      r: { repo: string; ws: string; branch?: string; title?: string },
    ) =>
      `${sid.slice(0, 8)}  ${(state ?? "").padEnd(14)} ${(r.repo || r.ws ? `${r.repo}/${r.ws}` : "(location unknown)").padEnd(32)} ${(r.branch ?? "").padEnd(20)} ${r.title ?? ""}`.trimEnd();
    // Busy (the contract's `isBusy`): a gateway saw inference run for it just
    // now (PeerInfo.gateway_active_at), or, where this instance's session
    // files are at hand, a request is still open (a long answer streams past
    // the window).
    const now = Date.now();
    const stateDir = resolveStateDir(values["state-dir"]);
    const busy = (p: PeerInfo) => {
      const file = readSessionLlm(stateDir, p.sid);
      return (file !== undefined && isBusy(file, now)) || isBusy(p, now);
    };
    const anyBusy = data.peers.some(busy);
    lines.push(data.peers.length ? "live:" : "no live sessions");
    for (const p of data.peers) lines.push(`${busy(p) ? "● " : "  "}${row(p.sid, p.state, p)}`);
    if (anyBusy)
      lines.push(
        `(● busy: inference in flight or within the last ${BUSY_WINDOW_MS / 1000} s, as a gateway saw it)`,
      );
    if (data.last_live.length) lines.push("lately lost:");
    for (const l of data.last_live) lines.push(`  ${row(l.sid, l.state, l)}`);
    return lines.join("\n");
  });
};

/** `ccmsg agents` — the harness's own list of running sessions (the `agents`
 * topic, a person's view: it greets as the person even inside a session). */
export const agents: Command = async (argv) => {
  const { values } = parse(argv, {}, "ccmsg agents");
  const client = await connectInstance(values);
  const { reply: greeting } = await sendGreeting(client, undefined);
  const reading = topicSnapshot<AgentsData>(client, "agents");
  reading.catch(() => {});
  await greeting;
  const data = await reading;
  client.close();
  print(values, data, () => {
    if (data.agents.length === 0) return "no running sessions found in the harness's files";
    const lines = [
      `${"SID".padEnd(8)}  ${"PID".padStart(7)}  ${"STATUS".padEnd(24)} ${"KIND".padEnd(11)} ${"TERMINAL".padEnd(8)} ${"CWD".padEnd(32)} NAME`,
    ];
    for (const a of data.agents) {
      const status = a.waiting_for
        ? `${a.status ?? "waiting"}: ${a.waiting_for}`
        : (a.status ?? "");
      const terminal = a.terminal_id
        ? `${a.terminal_namespace ? `${a.terminal_namespace}/` : ""}${a.terminal_id}`
        : "";
      lines.push(
        `${a.sid.slice(0, 8)}  ${String(a.pid).padStart(7)}  ${status.padEnd(24)} ${a.kind.padEnd(11)} ${terminal.padEnd(8)} ${a.cwd.padEnd(32)} ${a.name ?? ""}`.trimEnd(),
      );
    }
    return lines.join("\n");
  });
};

const SUBSCRIBE_USAGE = "ccmsg subscribe <topic>… [--exit-on-restart]";
/** Waits between reconnection attempts: doubling from the first, capped. */
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 2000;

/** `ccmsg subscribe <topic>…` — stream frames as NDJSON until interrupted.
 * When the instance restarts or the connection is lost it reconnects (never
 * starting an instance itself: a `daemon stop` stays stopped) and subscribes
 * again, so each topic starts over with a fresh snapshot; `--exit-on-restart`
 * ends instead. */
export const subscribe: Command = async (argv) => {
  const { values, positionals } = parse(
    argv,
    { "exit-on-restart": { type: "boolean" } },
    SUBSCRIBE_USAGE,
  );
  if (positionals.length === 0)
    throw new ContractError("invalid_args", `usage: ${SUBSCRIBE_USAGE}`);
  const sid = sessionId(values);
  // Derived once: every reconnection announces the same session.
  const meta = sid === undefined ? undefined : await derivedMeta();
  const { socket } = stateFiles(resolveStateDir(values["state-dir"]));
  let interrupted = false;
  let current: Client | undefined;
  let wake = () => {};
  process.once("SIGINT", () => {
    interrupted = true;
    current?.close();
    wake();
  });
  const topics = await Promise.all(positionals.map((t) => topicArg(values, t)));
  current = await connectInstance(values);
  for (;;) {
    const { restarting } = await stream(current, sid, meta, topics);
    if (interrupted) return;
    if (values["exit-on-restart"]) {
      if (restarting) return;
      throw new ContractError("instance_unreachable", "the connection to the instance was lost");
    }
    current = undefined;
    for (
      let wait = RETRY_FIRST_MS;
      current === undefined;
      wait = Math.min(wait * 2, RETRY_MAX_MS)
    ) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      if (interrupted) return;
      current = await Client.connectUnix(socket).catch(() => undefined);
    }
  }
};

/** A topic named on the command line, its session (`session_status:<sid>`)
 * named like any sid argument; resolved once, so every reconnection
 * subscribes to the same. */
function topicArg(flags: Flags, topic: string): Promise<string> {
  const colon = topic.indexOf(":");
  const kind = topic.slice(0, colon);
  if (colon < 0 || !Object.hasOwn(TOPIC_ATTRIBUTES, kind)) return Promise.resolve(topic);
  if ((TOPIC_ATTRIBUTES[kind as TopicKind] as TopicAttributes).param !== "sid")
    return Promise.resolve(topic);
  const typed = topic.slice(colon + 1);
  return sidArg(flags, typed, `the session of topic ${topic}`).then((sid) => `${kind}:${sid}`);
}

/** One connection's life: greet, subscribe to each topic, print every frame
 * (the `restarting` event too); resolves when the connection closes, saying
 * whether the instance announced a restart first. */
async function stream(
  client: Client,
  sid: string | undefined,
  meta: SessionMeta | undefined,
  topics: string[],
): Promise<{ restarting: boolean }> {
  let restarting = false;
  const closed = new Promise<void>((resolve) => client.onClose(resolve));
  client.onPushed((p) => {
    if (p.ev === "restarting") restarting = true;
    process.stdout.write(`${JSON.stringify(p)}\n`);
  });
  try {
    await greet(client, sid, meta);
    for (const topic of topics) await client.call("topic_subscribe", { topic });
  } catch (error) {
    // A refusal ends the command; a connection lost meanwhile is ridden out.
    if (!client.closed) {
      client.close();
      throw error;
    }
  }
  await closed;
  return { restarting };
}

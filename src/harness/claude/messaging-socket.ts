import { chmod, readdir, readFile, rm } from "node:fs/promises";
import { connect, createServer, type Socket } from "node:net";
import { dirname, join, resolve } from "node:path";
import { MAX_FRAME_BYTES } from "../../contract/constants.js";
import { LineFramer } from "../../net/line-framer.js";
import { nodeCrypto } from "../../util/lazy-builtins.js";
import { sha256Hex } from "../../util/sha256.js";

// Direct delivery into a Claude Code session's own messaging socket
// (harness.md §5.2, unofficial; DR-0026). The recipient's state file names
// the socket; the key file beside it holds the token that lets a writer in.
// There is no positive acknowledgement: the harness only reports refusals, on
// a reply socket of ours, so silence within a short window means delivered.

/** The only messaging protocol version spoken here. */
export const SUPPORTED_PEER_PROTOCOL = 1;
/** Connecting and flushing both lines may take this long. */
export const SOCKET_FLUSH_BUDGET_MS = 2000;
/** How long silence on the status socket must last to mean "delivered". */
export const REFUSAL_WINDOW_MS = 250;
/** A key file is a few dozen bytes (the harness itself reads at most 4 KiB). */
const KEY_FILE_MAX_BYTES = 4096;
/** Receipts that name a message as not handed to the model (now). `held`
 * differs from the rest: Claude Code parks the message for its person and
 * hands it over itself once released (verified with 2.1.328: its
 * `crossSessionInbound` "hold" setting, then "accept"). */
const REFUSALS = new Set(["refused", "denied", "dropped", "expired", "held"]);

/** What the recipient's state file says about its socket. */
export interface SocketTarget {
  pid: number;
  messagingSocketPath?: string;
  peerProtocol?: unknown;
}

export interface SocketDelivery {
  /** The recipient's config home (its `sessions/` holds the key file). */
  configHome: string;
  /** The recipient's sid: the harness drops a frame aimed at another session. */
  sid: string;
  /** The frame's `msg_id`, which refusals name. The harness keeps only a
   * UUID here, so a refusal of anything else could not be matched. */
  msgId: string;
  /** The rendered `<cross-session-message>` text. */
  content: string;
}

export type SocketOutcome =
  | { outcome: "delivered" }
  /** The harness kept it to hand over later, on its person's release. */
  | { outcome: "parked" }
  | { outcome: "refused"; status: string }
  | { outcome: "unavailable"; why: string };

const unavailable = (why: string): SocketOutcome => ({ outcome: "unavailable", why });

/**
 * The key file's token, when the state file's preconditions hold. The key is
 * `<pid>.<hex>.key` beside the state file; Claude Code names its hex after
 * the socket path (sha256), which picks the right one when a reused pid left
 * another behind.
 */
export async function socketToken(
  target: SocketTarget,
  configHome: string,
): Promise<{ token: string; socket: string } | { why: string }> {
  if (target.peerProtocol !== SUPPORTED_PEER_PROTOCOL)
    return { why: `peerProtocol ${String(target.peerProtocol)} is not ${SUPPORTED_PEER_PROTOCOL}` };
  const socket = target.messagingSocketPath;
  if (typeof socket !== "string" || socket === "") return { why: "no messagingSocketPath" };
  const dir = join(configHome, "sessions");
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return { why: "no sessions directory" };
  }
  const pattern = new RegExp(`^${target.pid}\\.[0-9a-f]+\\.key$`);
  const keys = names.filter((n) => pattern.test(n));
  const named = `${target.pid}.${sha256Hex(resolve(socket))}.key`;
  const ordered = keys.includes(named) ? [named] : keys;
  for (const name of ordered) {
    const token = await readToken(join(dir, name));
    if (token !== undefined) return { token, socket };
  }
  return { why: keys.length === 0 ? "no key file" : "no token in the key file" };
}

async function readToken(path: string): Promise<string | undefined> {
  try {
    const text = await readFile(path, "utf8");
    if (text.length > KEY_FILE_MAX_BYTES) return undefined;
    const token = (JSON.parse(text) as { peerToken?: unknown }).peerToken;
    return typeof token === "string" && token !== "" ? token : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Write one message into the harness socket: bind a status socket beside the
 * target's (the harness answers only addresses in its own socket directory),
 * connect, write the auth line and the user frame, then listen for a refusal
 * for REFUSAL_WINDOW_MS. Every failure on the way is `unavailable`; only a
 * receipt naming our message is `refused` (or `parked`, when it is `held`).
 * The status socket is always removed.
 */
export async function deliverToSocket(
  target: SocketTarget,
  d: SocketDelivery,
): Promise<SocketOutcome> {
  const found = await socketToken(target, d.configHome);
  if ("why" in found) return unavailable(found.why);
  const statusPath = join(
    dirname(found.socket),
    `${process.pid}-${nodeCrypto().randomBytes(4).toString("hex")}.sock`,
  );
  const auth = `${JSON.stringify({ type: "auth", token: found.token })}\n`;
  const user = `${JSON.stringify({
    type: "user",
    from: `uds:${statusPath}`,
    session_id: d.sid,
    msg_id: d.msgId,
    message: { content: d.content },
  })}\n`;
  // The harness counts what it buffers from a connection, auth line included.
  if (Buffer.byteLength(auth) + Buffer.byteLength(user) > MAX_FRAME_BYTES)
    return unavailable("frame over 1 MiB");
  let refusal: string | undefined;
  let status: ReceiptSocket;
  try {
    status = await listenForReceipts(statusPath, d.msgId, (s) => {
      refusal ??= s;
    });
  } catch (error) {
    return unavailable(`status socket: ${errorCode(error)}`);
  }
  try {
    const conn = await writeFrames(found.socket, auth + user);
    if ("why" in conn) return unavailable(conn.why);
    // A harness that read the lines keeps the connection open; one that closes
    // it now dropped them (a token it did not take, a line it could not read).
    let closedByPeer = false;
    conn.socket.once("close", () => {
      closedByPeer = true;
    });
    await new Promise((r) => setTimeout(r, REFUSAL_WINDOW_MS));
    const dropped = closedByPeer || conn.socket.destroyed;
    conn.socket.destroy();
    if (refusal === "held") return { outcome: "parked" };
    if (refusal !== undefined) return { outcome: "refused", status: refusal };
    if (dropped) return unavailable("the harness closed the connection");
    return { outcome: "delivered" };
  } finally {
    await status.close();
  }
}

/** Connect and write within SOCKET_FLUSH_BUDGET_MS. */
function writeFrames(path: string, text: string): Promise<{ socket: Socket } | { why: string }> {
  return new Promise((settle) => {
    const socket = connect(path);
    let done = false;
    const finish = (value: { socket: Socket } | { why: string }) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if ("why" in value) socket.destroy();
      settle(value);
    };
    // An unfinished frame lacks its last bytes; the harness cannot read it.
    const timer = setTimeout(
      () => finish({ why: "connect and flush budget exceeded" }),
      SOCKET_FLUSH_BUDGET_MS,
    );
    socket.on("error", (error) => finish({ why: `socket: ${errorCode(error)}` }));
    socket.on("close", () => finish({ why: "the harness closed the connection" }));
    socket.once("connect", () => {
      socket.write(text, (error) => {
        if (error) finish({ why: `socket: ${errorCode(error)}` });
        else finish({ socket });
      });
    });
  });
}

interface ReceiptSocket {
  close(): Promise<void>;
}

/**
 * A Unix socket (mode 0600) that takes the harness's receipts: a
 * `peer_message_status` line naming `msgId` as `orig_msg_id` or among
 * `dropped_msg_ids`, with a refusing status. Claude Code 2.1.328 sends it as
 * `{"type":"control","action":"peer_message_status",…}`; the bare
 * `{"type":"peer_message_status",…}` form of the spec is read too.
 */
async function listenForReceipts(
  path: string,
  msgId: string,
  onRefusal: (status: string) => void,
): Promise<ReceiptSocket> {
  const open = new Set<Socket>();
  const server = createServer((conn) => {
    open.add(conn);
    conn.on("close", () => open.delete(conn));
    const framer = new LineFramer(
      MAX_FRAME_BYTES,
      (line) => {
        const status = refusalIn(line, msgId);
        if (status !== undefined) onRefusal(status);
      },
      () => conn.destroy(),
    );
    conn.on("data", (chunk: Buffer) => framer.push(chunk));
    // A last line without its newline still counts (the harness reads so too).
    conn.on("end", () => framer.push(Buffer.from("\n")));
    conn.on("error", () => {});
  });
  const close = async () => {
    for (const c of open) c.destroy();
    await new Promise<void>((r) => server.close(() => r()));
    // Node removes a socket file it bound as it closes; this covers the rest.
    await rm(path, { force: true }).catch(() => {});
  };
  await new Promise<void>((ok, fail) => {
    server.once("error", fail);
    server.listen(path, () => {
      server.off("error", fail);
      ok();
    });
  });
  server.on("error", () => {});
  try {
    await chmod(path, 0o600);
  } catch (error) {
    await close();
    throw error;
  }
  return { close };
}

/** The refusing status a receipt line gives our message, if it does. */
export function refusalIn(line: string, msgId: string): string | undefined {
  let frame: unknown;
  try {
    frame = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof frame !== "object" || frame === null) return undefined;
  const f = frame as Record<string, unknown>;
  const isStatus =
    f.type === "peer_message_status" ||
    (f.type === "control" && f.action === "peer_message_status");
  if (!isStatus || typeof f.status !== "string" || !REFUSALS.has(f.status)) return undefined;
  const dropped = Array.isArray(f.dropped_msg_ids) ? f.dropped_msg_ids : [];
  return f.orig_msg_id === msgId || dropped.includes(msgId) ? f.status : undefined;
}

function errorCode(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  return e?.code ?? e?.message ?? String(error);
}

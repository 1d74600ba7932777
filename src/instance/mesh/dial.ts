import type { IncomingMessage } from "node:http";
import { connect as netConnect, type Socket } from "node:net";
import { MAX_FRAME_BYTES } from "../../contract/constants.js";
import type { FrameWriter, Transport } from "../wire/transport.js";
import { MESH_SUBPROTOCOL } from "../wire/transport.js";

// The dialer's side of a link's sockets: the WebSocket to `<endpoint>ws` and
// the one-off key fetch (C2) to `<endpoint>mesh/jwk/<kid>`. `tcpTo`
// (`host:port`, a test hook) only says where the TCP connection goes; the
// URL, and so the Host header, stays the endpoint's.

/** A key answer is a few hundred bytes; anything much larger is refused. */
const KEY_ANSWER_MAX_BYTES = 16 * 1024;
/** How much of a refused upgrade's reason is read. */
const REFUSAL_MAX_CHARS = 512;

export interface DialedSocket {
  transport: Transport;
  /** The close code the other side (or this one) ended it with. */
  closeCode(): number | undefined;
}

const connectTo = (tcpTo: string | undefined) => {
  if (tcpTo === undefined) return undefined;
  const colon = tcpTo.lastIndexOf(":");
  const host = tcpTo.slice(0, colon).replace(/^\[|\]$/g, "");
  const port = Number(tcpTo.slice(colon + 1));
  return () => netConnect({ host, port });
};

/** Open the link's WebSocket; resolves once upgraded (frames are read only
 * after the connection listens, as on the accepting side). */
export async function dialLink(
  endpoint: string,
  tcpTo: string | undefined,
  timeoutMs: number,
): Promise<DialedSocket> {
  // Loaded on the first dial, not at start: the instance's first reply
  // should not wait for a WebSocket client it may never use.
  const [{ WebSocket }, { dialedTransport }] = await Promise.all([
    import("ws"),
    import("../wire/ws.js"),
  ]);
  return new Promise((resolve, reject) => {
    const create = connectTo(tcpTo);
    const ws = new WebSocket(`${endpoint}ws`, [MESH_SUBPROTOCOL], {
      perMessageDeflate: false,
      handshakeTimeout: timeoutMs,
      maxPayload: 64 * MAX_FRAME_BYTES,
      followRedirects: false,
      ...(create === undefined ? {} : { createConnection: create }),
    });
    let socket: Socket | undefined;
    let code: number | undefined;
    ws.on("upgrade", (res: IncomingMessage) => {
      socket = res.socket as Socket;
    });
    ws.on("close", (c) => {
      code ??= c;
    });
    ws.once("error", (error) => reject(error));
    // A refused upgrade (an instance in no mesh, too many handshakes from
    // here): its JSON body says why, and that is what `mesh list` shows.
    ws.once("unexpected-response", (req, res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        if (text.length < REFUSAL_MAX_CHARS) text += chunk;
      });
      res.once("end", () => {
        let why = "";
        try {
          const error = (JSON.parse(text) as { error?: unknown }).error;
          if (typeof error === "string") why = `: ${error.slice(0, REFUSAL_MAX_CHARS)}`;
        } catch {}
        reject(new Error(`the peer refused the mesh socket (HTTP ${res.statusCode})${why}`));
        req.destroy();
      });
      res.once("error", (error) => reject(error));
    });
    ws.once("open", () => {
      if (ws.protocol !== MESH_SUBPROTOCOL) {
        ws.terminate();
        reject(new Error("the peer did not take the mesh subprotocol"));
        return;
      }
      // Set on "upgrade", which `ws` emits before "open".
      if (socket === undefined) {
        ws.terminate();
        reject(new Error("the mesh socket opened without its TCP socket"));
        return;
      }
      const transport = dialedTransport(ws, socket);
      const writer: FrameWriter = {
        ...transport.writer,
        close(c, reason) {
          code ??= c;
          transport.writer.close(c, reason);
        },
      };
      resolve({ transport: { ...transport, writer }, closeCode: () => code });
    });
  });
}

/**
 * C2 (§8.1 step 4): `POST <iss>mesh/jwk/<kid>` with `{"challenge": …}`; the
 * answer is the one-off public JWK. Rejects on any status but 200, a body
 * that is not a JSON object, or after `timeoutMs`.
 */
export async function fetchKey(
  iss: string,
  kid: string,
  challenge: string,
  tcpTo: string | undefined,
  timeoutMs: number,
): Promise<unknown> {
  const url = new URL(`mesh/jwk/${encodeURIComponent(kid)}`, iss);
  // Loaded on the first fetch: node's HTTP client (and TLS) is not needed
  // before the instance first answers (DR-0064).
  const { request } = await (url.protocol === "https:"
    ? import("node:https")
    : import("node:http"));
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ challenge });
    const create = connectTo(tcpTo);
    const req = request(
      url,
      {
        method: "POST",
        // A fresh connection, closed after the answer: C2 is one exchange.
        agent: false,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        timeout: timeoutMs,
        ...(create === undefined ? {} : { createConnection: create }),
      },
      (res) => {
        const parts: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > KEY_ANSWER_MAX_BYTES) req.destroy(new Error("key answer too large"));
          else parts.push(c);
        });
        res.on("end", () => {
          if (res.statusCode !== 200)
            return reject(new Error(`key route answered ${res.statusCode}`));
          try {
            const v: unknown = JSON.parse(Buffer.concat(parts).toString("utf8"));
            if (typeof v !== "object" || v === null) throw new Error("not an object");
            resolve(v);
          } catch {
            reject(new Error("key route answered something other than a JWK"));
          }
        });
        res.on("error", reject);
      },
    );
    const timer = setTimeout(() => req.destroy(new Error("key fetch timed out")), timeoutMs);
    req.on("close", () => clearTimeout(timer));
    req.on("timeout", () => req.destroy(new Error("key fetch timed out")));
    req.on("error", reject);
    req.end(body);
  });
}

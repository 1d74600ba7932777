import { gateRefusal } from "../../contract/attributes.js";
import { PROTOCOL_VERSION } from "../../contract/constants.js";
import { contractError } from "../../contract/errors.js";
import { SESSION_META_KEYS, type SessionMeta } from "../../contract/peers.js";
import { parseTopic, TOPIC_ATTRIBUTES } from "../../contract/topics.js";
import type { Handlers } from "../dispatch.js";
import { checkTranscriptPath } from "../transcript-path.js";
import type { Services } from "./services.js";

/** The common plane: hello, instance_ping, instance_shutdown,
 * session_stopping, topic_subscribe, topic_unsubscribe. */
export function connectHandlers(s: Services): Handlers {
  return {
    async hello(args, { conn }) {
      if (args.role === "instance" && conn.kind === "ws") {
        // Over WebSocket an instance must prove its endpoint (mesh handshake);
        // over the local socket, access to the socket file is the proof.
        throw contractError(
          "internal_error",
          "instance greetings over WebSocket: not implemented in this build",
        );
      }
      if (args.role === "session" && args.sid !== undefined) {
        const sid = args.sid;
        const meta: SessionMeta = {};
        for (const key of SESSION_META_KEYS) if (args[key] !== undefined) meta[key] = args[key];
        if (meta.transcript_path !== undefined) {
          const refused = await checkTranscriptPath(meta.transcript_path, s.configHome);
          if (refused !== undefined) {
            s.log.warn(
              { sid, path: meta.transcript_path, why: refused },
              "transcript_path refused",
            );
            delete meta.transcript_path;
          }
        }
        s.sessions.attach(conn, sid, meta, args.protocol_version, args.client_version);
        conn.onClose(() => s.sessions.detach(conn, sid));
      }
      return {
        protocol_version: PROTOCOL_VERSION,
        instance: s.instanceId,
        instances: [s.self()],
        capabilities: [...s.capabilities],
        version: s.version,
        started_at: s.startedAt,
      };
    },

    instance_ping() {
      return {
        instance: s.instanceId,
        version: s.version,
        pid: process.pid,
        started_at: s.startedAt,
        clients: s.clientCount(),
        exe: process.execPath,
        script: process.argv[1] ?? "",
        http: s.httpAddresses(),
        network: "unknown",
      };
    },

    instance_shutdown(_args, ctx) {
      ctx.afterReply(() => s.shutdown("instance_shutdown"));
      return {};
    },

    session_stopping(args, { caller }) {
      const stopped_at = s.sessions.declareStopping(caller.sid);
      s.log.info({ sid: caller.sid, reason: args.reason }, "session declared stopping");
      return { stopped_at };
    },

    topic_subscribe({ topic }, ctx) {
      const parsed = parseTopic(topic);
      if (parsed === undefined) {
        throw contractError("topic_unknown", `not a topic of this generation: ${topic}`);
      }
      const refused = gateRefusal(
        parsed.kind,
        TOPIC_ATTRIBUTES[parsed.kind],
        ctx.caller.role,
        s.capabilities,
      );
      if (refused !== undefined) throw contractError(refused.code, refused.msg);
      if (!s.hub.serves(parsed.kind)) {
        throw contractError(
          "internal_error",
          `topic ${parsed.kind}: not implemented in this build`,
        );
      }
      // The reply acknowledges; the value follows as the first frame.
      ctx.afterReply(() => s.hub.subscribe(ctx.conn, parsed));
      return { topic };
    },

    topic_unsubscribe({ topic }, { conn }) {
      if (parseTopic(topic) === undefined) {
        throw contractError("topic_unknown", `not a topic of this generation: ${topic}`);
      }
      s.hub.unsubscribe(conn, topic);
      return { topic };
    },
  };
}

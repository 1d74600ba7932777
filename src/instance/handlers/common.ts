import type { HelloArgs } from "../../contract/common.js";
import { PROTOCOL_VERSION } from "../../contract/constants.js";
import { contractError } from "../../contract/errors.js";
import { SESSION_META_KEYS, type SessionMeta } from "../../contract/peers.js";
import { parseTopic, TOPIC_ATTRIBUTES, type TopicAttributes } from "../../contract/topics.js";
import type { Handlers } from "../dispatch.js";
import { checkTranscriptPath } from "../transcript-path.js";
import type { Services } from "./services.js";

/** hello, instance_ping, instance_shutdown, session_stopping, topic_subscribe,
 * topic_unsubscribe. */
export function commonHandlers(s: Services): Handlers {
  return {
    async hello(frame, { conn }) {
      const args = frame as HelloArgs;
      if (args.role === "instance" && conn.channel.kind === "ws") {
        // Over WebSocket an instance must prove its endpoint (mesh handshake);
        // over the local socket, access to the socket file is the proof.
        throw contractError(
          "internal_error",
          "instance greetings over WebSocket: not implemented in this build",
        );
      }
      if (args.role === "session") {
        const meta: SessionMeta = {};
        for (const key of SESSION_META_KEYS) if (args[key] !== undefined) meta[key] = args[key];
        if (meta.transcript_path !== undefined) {
          const refused = await checkTranscriptPath(meta.transcript_path, s.configHome);
          if (refused !== undefined) {
            s.log.warn(
              { sid: args.sid, path: meta.transcript_path, why: refused },
              "transcript_path refused",
            );
            delete meta.transcript_path;
          }
        }
        const sid = args.sid!;
        conn.identity = { role: "session", sid };
        s.sessions.attach(conn, sid, meta, args.protocol_version, args.client_version);
        conn.onClose(() => s.sessions.detach(conn, sid));
      } else {
        conn.identity = { role: args.role };
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

    instance_shutdown(_frame, ctx) {
      ctx.afterReply(() => s.shutdown("instance_shutdown"));
      return {};
    },

    session_stopping(frame, { identity }) {
      const stopped_at = s.sessions.declareStopping(identity!.sid!);
      s.log.info({ sid: identity!.sid, reason: frame.reason }, "session declared stopping");
      return { stopped_at };
    },

    topic_subscribe(frame, ctx) {
      const topic = frame.topic as string;
      const parsed = parseTopic(topic);
      if (parsed === undefined)
        throw contractError("topic_unknown", `not a topic of this generation: ${topic}`);
      const attrs: TopicAttributes = TOPIC_ATTRIBUTES[parsed.kind];
      const role = ctx.identity!.role;
      if (!attrs.roles.includes(role))
        throw contractError("forbidden", `${parsed.kind} is not open to role ${role}`);
      if (attrs.capability !== undefined && !s.capabilities.has(attrs.capability)) {
        throw contractError(
          "capability_unavailable",
          `${parsed.kind} needs capability ${attrs.capability}`,
        );
      }
      if (!s.hub.serves(parsed.kind)) {
        throw contractError(
          "internal_error",
          `topic ${parsed.kind}: not implemented in this build`,
        );
      }
      // The reply acknowledges; the value follows as the first frame.
      ctx.afterReply(() => s.hub.subscribe(ctx.conn, topic, parsed.kind, parsed.param));
      return { topic };
    },

    topic_unsubscribe(frame, { conn }) {
      const topic = frame.topic as string;
      if (parseTopic(topic) === undefined)
        throw contractError("topic_unknown", `not a topic of this generation: ${topic}`);
      s.hub.unsubscribe(conn, topic);
      return { topic };
    },
  };
}

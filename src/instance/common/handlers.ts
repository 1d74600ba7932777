import { gateRefusal } from "../../contract/attributes.js";
import { PROTOCOL_VERSION } from "../../contract/constants.js";
import { contractError } from "../../contract/errors.js";
import type { Capability, InstanceId } from "../../contract/identifiers.js";
import { SESSION_META_KEYS, type SessionMeta } from "../../contract/peers.js";
import { parseTopic, TOPIC_ATTRIBUTES } from "../../contract/topics.js";
import { containmentRefusal } from "../../harness/transcript-files.js";
import type { Logger } from "../../util/logger.js";
import type { Handlers } from "../dispatch.js";
import type { Mesh } from "../mesh/mesh.js";
import type { Messaging } from "../messaging/engine.js";
import type { HarnessKind, Presence } from "../sessions/presence.js";
import type { Sessions } from "../sessions/sessions.js";
import { vouch } from "../sessions/vouch.js";
import type { TopicHub } from "../topic-hub.js";
import type { Transcripts } from "../transcripts/engine.js";
import { isFeedKind } from "../transcripts/topics.js";
import type { Connection } from "../wire/connection.js";

/** What the common plane's ops use. */
export interface CommonPlaneDeps {
  instanceId: InstanceId;
  version: string;
  startedAt: number;
  log: Logger;
  sessions: Sessions;
  /** Which sessions run, from the harness's files; `fresh()` before acting. */
  presence: Pick<Presence, "fresh">;
  messaging: Messaging;
  hub: TopicHub;
  capabilities: ReadonlySet<Capability>;
  /** The harness config home whose transcript tree transcripts must be in. */
  configHome: string;
  /** The harness whose config home it is. */
  harness: HarnessKind;
  transcripts: Transcripts;
  mesh: Mesh;
  clientCount(): number;
  httpAddresses(): string[];
  /** Begin a graceful stop (after the current reply is written). */
  shutdown(reason: string): void;
}

/** The common plane: hello, instance_ping, instance_shutdown,
 * session_stopping, topic_subscribe, topic_unsubscribe. */
export function connectHandlers(s: CommonPlaneDeps): Handlers {
  /** Refuse what only the session itself may do when its harness proves the
   * connection is someone else's (session-vouch.ts): the trust model of docs/10-security.md. */
  async function refuseForeign(conn: Connection, sid: string, action: string): Promise<void> {
    const verdict = await vouch(conn.peer, sid, s.configHome);
    if (verdict.kind !== "foreign") return;
    s.log.warn(
      { sid, action, harness: verdict.harness, callers: verdict.callers, conn: conn.id },
      "refused: the connection is outside the session's harness process tree",
    );
    throw contractError(
      "forbidden",
      `this connection is not part of session ${sid}: its harness (process ${verdict.harness}) runs elsewhere, so it may not ${action}`,
    );
  }

  /** Log, off the reply's path, a greeting the session's harness disowns. */
  async function flagForeign(conn: Connection, sid: string): Promise<void> {
    const verdict = await vouch(conn.peer, sid, s.configHome).catch(() => undefined);
    if (verdict?.kind === "foreign")
      s.log.warn(
        { sid, harness: verdict.harness, callers: verdict.callers, conn: conn.id },
        "a greeting joined a live session from outside its harness process tree",
      );
  }

  return {
    async hello(args, { conn, afterReply }) {
      // A person's access token speaks for a person: never a session or an
      // instance (those use the local socket, or a mesh proof).
      if (conn.person !== undefined && args.role !== "user")
        throw contractError(
          "invalid_args",
          "a connection opened with a person's access token greets with role user",
        );
      if (args.role === "instance" && conn.kind === "ws") {
        // Over WebSocket an instance must prove its endpoint first (the mesh
        // handshake, mesh/mesh.ts); this reply is then the ack and the link
        // is up once it is queued. Over the local socket, access to the
        // socket file is the proof.
        if (!s.mesh.greetingVerified(conn))
          throw contractError(
            "forbidden",
            "an instance greeting over WebSocket needs the mesh proof",
          );
        afterReply(() => s.mesh.acked(conn));
      }
      if (args.role === "session" && args.sid !== undefined) {
        const sid = args.sid;
        const meta: SessionMeta = {};
        for (const key of SESSION_META_KEYS) if (args[key] !== undefined) meta[key] = args[key];
        if (meta.transcript_path !== undefined) {
          const refused = await containmentRefusal(meta.transcript_path, s.configHome, s.harness);
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
        // Joining a live session: a greeting its harness disowns is flagged
        // (refusals come when it tries to act as the session).
        const live = s.sessions.lookup(sid);
        if (live?.kind === "live" && live.session.connections.size > 1) void flagForeign(conn, sid);
      }
      return {
        protocol_version: PROTOCOL_VERSION,
        instance: s.instanceId,
        ...(s.mesh.configured && s.mesh.endpoint ? { endpoint: s.mesh.endpoint } : {}),
        instances: s.mesh.instances(),
        capabilities: [...s.capabilities],
        version: s.version,
        started_at: s.startedAt,
        ...(conn.person === undefined ? {} : { auth_expires_at: conn.person.expiresAt }),
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

    async session_stopping(args, { caller, conn }) {
      await refuseForeign(conn, caller.sid, "declare it stopping");
      const stopped_at = s.sessions.declareStopping(caller.sid);
      s.messaging.endWaiting(caller.sid);
      s.log.info({ sid: caller.sid, reason: args.reason }, "session declared stopping");
      return { stopped_at };
    },

    async topic_subscribe({ topic, hand_over }, ctx) {
      const parsed = parseTopic(topic);
      if (parsed === undefined) {
        throw contractError("topic_unknown", `not a topic of this generation: ${topic}`);
      }
      if (hand_over !== undefined && (parsed.kind !== "inbox" || ctx.caller.role !== "session"))
        throw contractError("invalid_args", "hand_over applies to a session's inbox only");
      const refused = gateRefusal(
        parsed.kind,
        TOPIC_ATTRIBUTES[parsed.kind],
        ctx.caller.role,
        s.capabilities,
      );
      if (refused !== undefined) throw contractError(refused.code, refused.msg);
      // A session holds the receipts of its own sends only (DR-0054).
      if (
        parsed.kind === "receipts" &&
        ctx.caller.role === "session" &&
        parsed.param !== ctx.caller.sid
      )
        throw contractError("forbidden", `a session may hold only receipts:${ctx.caller.sid}`);
      if (!s.hub.serves(parsed.kind)) {
        throw contractError(
          "internal_error",
          `topic ${parsed.kind}: not implemented in this build`,
        );
      }
      // Who runs is read fresh before the first frame says so (DR-0025).
      if (parsed.kind === "peers" || parsed.kind === "agents") await s.presence.fresh();
      // Taking a live inbox over is the session's own business.
      const { caller, conn } = ctx;
      if (parsed.kind === "inbox" && caller.role === "session" && s.messaging.lane.has(caller.sid))
        await refuseForeign(conn, caller.sid, "take its inbox over");
      if (parsed.kind === "inbox") s.messaging.armHandOver(conn, hand_over);
      // A session's transcript topics open with its feed caught up (harness.md §6.2).
      const feedSid = isFeedKind(parsed.kind) ? parsed.param : undefined;
      if (feedSid !== undefined) await s.transcripts.topics.prepare(feedSid);
      // The reply acknowledges; the value follows as the first frame.
      ctx.afterReply(() => {
        s.hub.subscribe(ctx.conn, parsed, hand_over !== "take");
        // A connection that closed meanwhile holds nothing: let the feed go.
        if (feedSid !== undefined) s.transcripts.topics.settle(feedSid);
      });
      return { topic };
    },

    async topic_unsubscribe({ topic, handed_over }, { conn }) {
      if (parseTopic(topic) === undefined) {
        throw contractError("topic_unknown", `not a topic of this generation: ${topic}`);
      }
      if (handed_over === undefined) {
        s.hub.unsubscribe(conn, topic);
        return { topic };
      }
      if (topic !== "inbox")
        throw contractError("invalid_args", "handed_over applies to the inbox only");
      const recorded = await s.messaging.confirmHandOver(conn, handed_over);
      s.hub.unsubscribe(conn, topic);
      return { topic, handed_over: recorded };
    },
  };
}

import { type Static, Type } from "@sinclair/typebox";
import { topicFrame } from "./envelope.js";
import { InstanceId, Sid, Timestamp } from "./identifiers.js";
import { topicNamePattern } from "./topics.js";
import { upstream } from "./upstream.js";

// The `agents` topic (contract §5.4): the harness's own list of running
// sessions, polled by each instance on its host. It sees sessions ccmsg was
// never told about, which is why it is a topic of its own and not a column of
// `peers`. Polled only while someone is subscribed.

/** One harness session as its own list reports it. The state words are the
 * harness's, passed through rather than mapped, so a new one shows up as is
 * instead of being lost. */
export const AgentInfo = Type.Object(
  {
    sid: Sid,
    /** The poller; `pid`, `cwd` and the terminal handle belong to its host. */
    instance: InstanceId,
    pid: Type.Integer({ minimum: 1 }),
    cwd: Type.String(),
    /** (open) Interactive or background. */
    kind: Type.String(),
    started_at: Timestamp,
    /** The session's title, where a rename shows up once the harness took it. */
    name: Type.Optional(Type.String()),
    /** (open) */
    status: Type.Optional(Type.String()),
    /** What the session waits on, in the harness's words. */
    waiting_for: Type.Optional(Type.String()),
    /** (open) For background sessions. */
    state: Type.Optional(Type.String()),
    background_id: Type.Optional(Type.String()),
    config_dir: Type.String(),
    /** The handle `session_rename` types into, read from the live process so
     * it cannot point at a terminal the session has left. */
    terminal_id: Type.Optional(Type.String()),
    /** The terminal multiplexer's namespace; absent = its default. */
    terminal_namespace: Type.Optional(Type.String()),
  },
  upstream("claude", "the harness's own list of running sessions"),
);
export type AgentInfo = Static<typeof AgentInfo>;

/** `agents` (per_instance_whole): everything the frame's instance polled. */
export const AgentsData = Type.Object({
  agents: Type.Array(AgentInfo),
  /** When the poll behind this frame ran. */
  polled_at: Type.Optional(Timestamp),
});
export type AgentsData = Static<typeof AgentsData>;
export const AgentsFrame = topicFrame(topicNamePattern("agents"), AgentsData);
export type AgentsFrame = Static<typeof AgentsFrame>;

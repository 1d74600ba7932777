import { type Static, Type } from "@sinclair/typebox";
import { META_NAME_MAX_CHARS, META_PATH_MAX_CHARS, TITLE_MAX_CHARS } from "./constants.js";
import { topicFrame } from "./envelope.js";
import { utf8Length } from "./frames.js";
import { Endpoint, InstanceId, Sid, Timestamp } from "./identifiers.js";
import { Text } from "./text.js";
import { topicNamePattern } from "./topics.js";

// Sessions as rows (contract §6): meta, connected rows, lost rows, the
// instance list, and the `peers` topic that carries them.

/** A meta string that names something (limits: constants.ts). */
const MetaName = () => Text({ maxLength: META_NAME_MAX_CHARS });
/** A meta string that is a path. */
const MetaPath = () => Text({ maxLength: META_PATH_MAX_CHARS });

/** Session meta, declared once and reused in `hello` and on the rows. All plain
 * strings; in `hello` every one is optional and merged field by field. Each is
 * bounded, so that a row — and the `peers` frame made of rows — stays small. */
export const SessionMetaFields = {
  /** Repository display name. */
  repo: MetaName(),
  /** Workspace (worktree) name within the repository. */
  ws: MetaName(),
  /** The session's working directory. */
  cwd: MetaPath(),
  /** The transcript file; only paths inside the config home's `projects/` tree
   * are accepted, so announcing one cannot turn into reading any file. */
  transcript_path: MetaPath(),
  /** The repository container; file browsing is rooted here so sibling
   * workspaces are reachable. */
  repo_root: MetaPath(),
  branch: MetaName(),
  /** The session's own title. Absent = unknown (not "untitled"). Also the
   * material for `from_label` and `sid_label`. */
  title: Text({ maxLength: TITLE_MAX_CHARS }),
  /** Model name in the session's own spelling. */
  model: MetaName(),
  /** Reasoning effort in the session's own spelling. */
  effort: MetaName(),
};

/** Build of a client, for display (`hello.client_version`, rows). */
export const ClientVersion = MetaName();

export const SESSION_META_KEYS = Object.keys(
  SessionMetaFields,
) as readonly (keyof typeof SessionMetaFields)[];

/** Every meta field optional: the shape `hello` carries. */
export const SessionMeta = Type.Partial(Type.Object(SessionMetaFields));
export type SessionMeta = Static<typeof SessionMeta>;

export const CONNECTED_STATES = ["waiting", "live", "live_unmanaged"] as const;
export const LOST_STATES = ["paused", "disappeared"] as const;
export type ConnectedState = (typeof CONNECTED_STATES)[number];
export type LostState = (typeof LOST_STATES)[number];
export type SessionState = ConnectedState | LostState;

/** The facts classification reads. */
export interface ClassifyFacts {
  connected: boolean;
  /** Set when the session declared `session_stopping` before it went. */
  stopped_at?: number;
  /** A dialog or harness error waits for a person (harness facts). */
  waiting?: boolean;
  /** Reachable through a client connection or a terminal. */
  reachable?: boolean;
}

/**
 * The one function that names a session's state (contract §6.4). Clients may
 * import it; nothing stores its answer. Declared intent, not observation,
 * separates a pause from a loss: a session lost without `session_stopping`
 * is `disappeared`. Busy-ness and pinning are not part of it.
 */
export function classify(facts: ClassifyFacts & { connected: false }): LostState;
export function classify(facts: ClassifyFacts & { connected: true }): ConnectedState;
export function classify(facts: ClassifyFacts): SessionState;
export function classify(facts: ClassifyFacts): SessionState {
  if (!facts.connected) return facts.stopped_at !== undefined ? "paused" : "disappeared";
  if (facts.waiting) return "waiting";
  return facts.reachable === false ? "live_unmanaged" : "live";
}

/** The state of a lost session's row, derived from its facts. */
export function lostStateOf(row: { stopped_at?: number }): LostState {
  return classify({ connected: false, stopped_at: row.stopped_at });
}

/** The harness a session runs in, as far as an instance can tell: a
 * transcript it accepted lives in a Claude Code config home. The one place
 * this guess is made (snapshot rows, ECC's sessions table, the HUD). */
export function harnessOf(s: { transcript_path?: string } | undefined): "claude-code" | "unknown" {
  return s?.transcript_path !== undefined ? "claude-code" : "unknown";
}

/** Where a session works, as every session row states it: `repo`, `ws` and
 * `cwd` always (derived from the paths when not stated), the rest when known. */
const RowLocation = {
  repo: SessionMetaFields.repo,
  ws: SessionMetaFields.ws,
  cwd: SessionMetaFields.cwd,
  transcript_path: Type.Optional(SessionMetaFields.transcript_path),
  repo_root: Type.Optional(SessionMetaFields.repo_root),
  branch: Type.Optional(SessionMetaFields.branch),
  title: Type.Optional(SessionMetaFields.title),
};

// --- the busy mark (●): one rule for the CLI, the statusline, the HUD and the console ---

/** One connected session (in `peers.peers`). */
export const PeerInfo = Type.Object({
  sid: Sid,
  /** The instance holding the session; paths on the row are that host's. */
  instance: InstanceId,
  ...RowLocation,
  /** Derived by the instance; a listed session is connected, so never a lost
   * state. Absent = no classification stated. */
  state: Type.Optional(Type.Union(CONNECTED_STATES.map((s) => Type.Literal(s)))),
  /** A mark, not a classification. Absent = not pinned. */
  pinned: Type.Optional(Type.Boolean()),
  /** First registration; stable across reconnects; reset by a restart. */
  connected_at: Type.Optional(Timestamp),
  /** The most recent request on any of its connections. */
  last_activity_at: Type.Optional(Timestamp),
  /** Last time a person put something into the session. Absent while none is
   * known: clients sort such rows after every dated one. */
  last_user_input_at: Type.Optional(Timestamp),
  /** When inference last ran for it, as a gateway saw it. An instant, not a
   * flag: nothing observes the moment a request stops being in flight. Absent
   * without a gateway, which is not "idle". */
  gateway_active_at: Type.Optional(Timestamp),
  /** Whether the asking session could reach this one through the harness's
   * own messaging. Computed against the asker: never on its own row, never
   * for a person. */
  send_message: Type.Optional(Type.Boolean()),
  client_version: Type.Optional(ClientVersion),
  protocol_version: Type.Integer({ minimum: 1 }),
  /** Set while some client of this session is being refused. Overwritten, not
   * accumulated. */
  stale_client: Type.Optional(
    Type.Object({
      last_seen_at: Timestamp,
      version: Type.Optional(ClientVersion),
      protocol_version: Type.Optional(Type.Integer({ minimum: 1 })),
    }),
  ),
});
export type PeerInfo = Static<typeof PeerInfo>;

/** A lost session (in `peers.last_live`), frozen from its last row. */
export const LastLiveSession = Type.Object({
  sid: Sid,
  instance: InstanceId,
  ...RowLocation,
  state: Type.Optional(Type.Union(LOST_STATES.map((s) => Type.Literal(s)))),
  pinned: Type.Optional(Type.Boolean()),
  connected_at: Type.Optional(Timestamp),
  /** The newest instant the session was known alive; retention counts from it. */
  last_seen_at: Timestamp,
  /** Set if and only if the session declared `session_stopping` before going:
   * declared intent, not observation, separates a pause from a loss. */
  stopped_at: Type.Optional(Timestamp),
  /** Read back from the transcript's last turn — what a resume must use. */
  model: Type.Optional(SessionMetaFields.model),
  effort: Type.Optional(SessionMetaFields.effort),
});
export type LastLiveSession = Static<typeof LastLiveSession>;

/** One instance as another sees it. `id` is absent until a handshake with it
 * completed; reachability is stated from the sender's position. */
export const InstanceInfo = Type.Object({
  id: Type.Optional(InstanceId),
  endpoint: Type.Optional(Endpoint),
  /** The host it runs on — an attribute, not an identity. */
  host: Type.String({ minLength: 1 }),
  reachable: Type.Boolean(),
});
export type InstanceInfo = Static<typeof InstanceInfo>;

/** A session live now in the same repository, offered when the addressee is
 * paused or gone. */
export const CandidateSession = Type.Object({
  sid: Sid,
  ws: Type.Optional(Type.String()),
  instance: InstanceId,
});
export type CandidateSession = Static<typeof CandidateSession>;

/** `peers` (per_instance_whole): the sending instance's complete lists.
 * `instances` absent = no view stated, keep what you had. */
export const PeersData = Type.Object({
  peers: Type.Array(PeerInfo),
  last_live: Type.Array(LastLiveSession),
  instances: Type.Optional(Type.Array(InstanceInfo)),
});
export type PeersData = Static<typeof PeersData>;
export const PeersFrame = topicFrame(topicNamePattern("peers"), PeersData);
export type PeersFrame = Static<typeof PeersFrame>;

/**
 * The `peers` value cut to `budget` bytes of JSON. A per_instance_whole value
 * is one frame — a second frame would replace the first — so it cannot be
 * split like an element snapshot. Meta limits keep a row small (a few hundred
 * bytes as sessions state it, under 100 KB at the very worst), so this cuts
 * only in extremes; then whole rows are left out, never cut: lost sessions
 * first, longest gone first, then connected ones, least recently active first.
 * `leftOut` says how many, for the instance's log.
 */
export function fitPeers(data: PeersData, budget: number): { data: PeersData; leftOut: number } {
  if (utf8Length(JSON.stringify(data), budget) <= budget) return { data, leftOut: 0 };
  const size = new Map<object, number>();
  let total = utf8Length(JSON.stringify({ ...data, peers: [], last_live: [] }));
  for (const row of [...data.peers, ...data.last_live]) {
    const bytes = utf8Length(JSON.stringify(row)) + 1;
    size.set(row, bytes);
    total += bytes;
  }
  const out = new Set<object>();
  for (const row of peersCutOrder(data.last_live, data.peers)) {
    if (total <= budget) break;
    out.add(row);
    total -= size.get(row)!;
  }
  return {
    data: {
      ...data,
      peers: data.peers.filter((r) => !out.has(r)),
      last_live: data.last_live.filter((r) => !out.has(r)),
    },
    leftOut: out.size,
  };
}

/** The rows of a `peers` value in the order `fitPeers` leaves them out: lost
 * sessions longest gone first, then connected ones least recently active. */
export function peersCutOrder<
  L extends { last_seen_at: number },
  P extends { last_activity_at?: number },
>(lastLive: readonly L[], peers: readonly P[]): (L | P)[] {
  return [
    ...[...lastLive].sort((a, b) => a.last_seen_at - b.last_seen_at),
    ...[...peers].sort((a, b) => (a.last_activity_at ?? 0) - (b.last_activity_at ?? 0)),
  ];
}

import type { Identity } from "./envelope.js";
import type { ErrorBody, ErrorCode } from "./errors.js";
import { type Capability, ROLES, type Role } from "./identifiers.js";

/** Which face of the contract an op belongs to. `common` is the transport
 * level every face uses: connect, declare the end of a connection, subscribe.
 * `mesh` holds no ops: an op crosses instances by carrying the envelope's mesh
 * fields, not by being a different op. */
export type Plane = "common" | "messaging" | "control" | "mesh";
export const PLANES = ["common", "messaging", "control", "mesh"] as const;

/** `instance-local`: the answer concerns one instance's processes, paths or
 * handles, so the op is forwarded to the owning instance. `cluster`: whichever
 * instance is reached answers. */
export type Locality = "instance-local" | "cluster";

export interface OpAttributes {
  readonly plane: Plane;
  /** Who may call it; any other role gets `forbidden`. Never empty. */
  readonly roles: readonly Role[];
  /** The connection must have a settled identity first. */
  readonly needs_hello: boolean;
  /** Missing from the instance's capabilities → `capability_unavailable`. */
  readonly capability?: Capability;
  readonly locality: Locality;
  /** The role changes what the reply contains, not whether the call is
   * allowed; only such ops are told the caller's role. */
  readonly scope?: "role";
  /** What scope `role` narrows to here: a session names only its own `sid`
   * (a person any). Another sid is refused before the handler runs, with the
   * op's code for what lies outside the caller's reach (DR-0052). */
  readonly own_sid?: OwnSid;
  /** Reached over HTTP rather than as a UDS/WS frame. */
  readonly carrier?: "http";
  /** Op-specific codes only; everything the row implies is derived. */
  readonly errors: readonly ErrorCode[];
  /** Not part of wire generation 3: this implementation's documented
   * extension (a generation-3 peer that does not know it answers
   * `unknown_op`, which is what it should). */
  readonly extension?: true;
}

/** A session naming another session's `sid` gets `code`, saying it may read
 * only its own `of`. */
export interface OwnSid {
  readonly code: Extract<ErrorCode, "forbidden" | "path_forbidden">;
  readonly of: string;
}

// A session's own transcript: outside its reach is an authorization matter
// (`forbidden`, the only refusal of the op's that fits; §4.3.3).
const OWN_TRANSCRIPT = { code: "forbidden", of: "transcript" } as const;
// A session's own files: another session's are paths outside what it may
// reach (`path_forbidden`, §3.1 code 12, §4.3.4).
const OWN_FILES = { code: "path_forbidden", of: "files" } as const;

// Named role sets, not repeated literals.
const ALL_ROLES = ROLES;
const SESSION_ONLY = ["session"] as const;
const USER_ONLY = ["user"] as const;
const INSTANCE_ONLY = ["instance"] as const;
const AGENT_AND_USER = ["session", "user"] as const;

const AUTH_ERRORS = ["auth_invalid", "auth_expired", "auth_unknown_issuer"] as const;
const TOKEN_ERRORS = ["auth_invalid", "auth_expired"] as const;

// Row builders for the two common shapes of control op: user-only and
// instance-local, optionally gated by a capability.
function userLocal<const E extends readonly ErrorCode[]>(errors: E) {
  return {
    plane: "control",
    roles: USER_ONLY,
    needs_hello: true,
    locality: "instance-local",
    errors,
  } as const;
}
function gated<const C extends Capability, const E extends readonly ErrorCode[]>(
  capability: C,
  errors: E,
) {
  return { ...userLocal(errors), capability } as const;
}

// Person-auth ops reached over HTTP before any greeting (§9).
function httpAuth<const E extends readonly ErrorCode[]>(errors: E) {
  return {
    plane: "common",
    roles: ALL_ROLES,
    needs_hello: false,
    locality: "cluster",
    carrier: "http",
    errors,
  } as const;
}

/**
 * The one place the facts of every op live (contract §4.2). Authorization,
 * capability gating and forwarding read this table; no handler writes its own
 * role check. Adding an op is: schema + row + handler.
 */
export const OP_ATTRIBUTES = {
  // --- common (13): connect, declare the end of a connection, subscribe ---
  // `hello` and `instance_ping` address the instance the caller reached, so
  // there is nothing to forward: they are `cluster` though they describe one
  // instance.
  hello: {
    plane: "common",
    roles: ALL_ROLES,
    needs_hello: false,
    locality: "cluster",
    errors: [],
  },
  instance_ping: {
    plane: "common",
    roles: ALL_ROLES,
    needs_hello: false,
    locality: "cluster",
    errors: [],
  },
  instance_shutdown: {
    plane: "common",
    roles: USER_ONLY,
    needs_hello: true,
    locality: "instance-local",
    errors: [],
  },
  session_stopping: {
    plane: "common",
    roles: SESSION_ONLY,
    needs_hello: true,
    locality: "instance-local",
    errors: [],
  },
  // Open to all three roles: instances subscribe to `auth_records` as
  // themselves. Who may hold a given topic is the topic table's question.
  topic_subscribe: {
    plane: "common",
    roles: ALL_ROLES,
    needs_hello: true,
    locality: "cluster",
    errors: ["topic_unknown"],
  },
  topic_unsubscribe: {
    plane: "common",
    roles: ALL_ROLES,
    needs_hello: true,
    locality: "cluster",
    errors: ["topic_unknown"],
  },
  // The four HTTP-carried auth ops run before any greeting: they are how a
  // person obtains the token that lets a WebSocket greet at all.
  auth_challenge: httpAuth([]),
  auth_register: httpAuth(AUTH_ERRORS),
  auth_assert: httpAuth(AUTH_ERRORS),
  auth_refresh_token: httpAuth(AUTH_ERRORS),
  auth_refresh: {
    plane: "common",
    roles: USER_ONLY,
    needs_hello: true,
    locality: "cluster",
    errors: TOKEN_ERRORS,
  },
  // Mesh-internal: addressed with `to_instance` to the issuer, the only
  // instance able to judge a code or rotate a family.
  auth_resolve: {
    plane: "common",
    roles: INSTANCE_ONLY,
    needs_hello: true,
    locality: "instance-local",
    errors: TOKEN_ERRORS,
  },
  auth_rotate: {
    plane: "common",
    roles: INSTANCE_ONLY,
    needs_hello: true,
    locality: "instance-local",
    errors: TOKEN_ERRORS,
  },

  // --- messaging (4) ---
  // `cluster` although the addressee lives on one instance: the instance
  // reached routes it, and an unreachable owner is an outcome
  // (`delivered: false`), not an error.
  message_send: {
    plane: "messaging",
    roles: AGENT_AND_USER,
    needs_hello: true,
    locality: "cluster",
    errors: ["session_not_found"],
  },
  say_post: {
    plane: "messaging",
    roles: SESSION_ONLY,
    needs_hello: true,
    locality: "cluster",
    errors: [],
  },
  say_mark_read: {
    plane: "messaging",
    roles: USER_ONLY,
    needs_hello: true,
    locality: "cluster",
    errors: [],
  },
  // Extension (DR-0054): the receipts of a few messages; a session gets
  // only its own sends' (others' are left out, not refused).
  receipts_read: {
    plane: "messaging",
    roles: AGENT_AND_USER,
    needs_hello: true,
    locality: "cluster",
    errors: [],
    extension: true,
  },
  notify_send: {
    plane: "messaging",
    roles: AGENT_AND_USER,
    needs_hello: true,
    locality: "cluster",
    errors: [],
  },
  // Extension: the person's inbox (DR-0056). A session answers a person's
  // message; only a person reads or marks the inbox.
  notify_reply: {
    plane: "messaging",
    roles: SESSION_ONLY,
    needs_hello: true,
    locality: "cluster",
    errors: [],
    extension: true,
  },
  notifications_read: {
    plane: "messaging",
    roles: USER_ONLY,
    needs_hello: true,
    locality: "cluster",
    errors: [],
    extension: true,
  },
  notifications_mark_read: {
    plane: "messaging",
    roles: USER_ONLY,
    needs_hello: true,
    locality: "cluster",
    errors: [],
    extension: true,
  },

  // Extension: the attention queue (DR-0062). A person reads and decides;
  // a session only with the person's grant (the handler refuses it
  // otherwise). A decision names the session, so it is forwarded to the
  // instance that holds its hook.
  attention_read: {
    plane: "control",
    roles: AGENT_AND_USER,
    needs_hello: true,
    locality: "cluster",
    errors: [],
    extension: true,
  },
  attention_decide: {
    plane: "control",
    roles: AGENT_AND_USER,
    needs_hello: true,
    locality: "instance-local",
    errors: ["session_not_found", "not_found"],
    extension: true,
  },
  // The person's grants (DR-0062): theirs alone to give and take back;
  // anyone greeted sees them. Kept in KV, so whichever instance answers.
  attention_grant: {
    plane: "control",
    roles: USER_ONLY,
    needs_hello: true,
    locality: "cluster",
    errors: [],
    extension: true,
  },
  attention_revoke: {
    plane: "control",
    roles: USER_ONLY,
    needs_hello: true,
    locality: "cluster",
    errors: [],
    extension: true,
  },
  attention_grants: {
    plane: "control",
    roles: AGENT_AND_USER,
    needs_hello: true,
    locality: "cluster",
    errors: [],
    extension: true,
  },

  // --- control (29): every one needs a greeting ---
  session_kill: userLocal(["session_not_found"]),
  session_rename: gated("terminal", ["session_not_found"]),
  session_env_read: userLocal(["session_not_found"]),
  session_search: userLocal([]),
  session_dump_write: userLocal(["not_found"]),
  dump_presets_read: { ...userLocal([]), roles: AGENT_AND_USER },
  // Scope `role`: a session reads only its own transcript, a person any.
  transcript_read: {
    ...userLocal(["not_found"]),
    roles: AGENT_AND_USER,
    scope: "role",
    own_sid: OWN_TRANSCRIPT,
  },
  transcript_items_read: {
    ...userLocal(["not_found"]),
    roles: AGENT_AND_USER,
    scope: "role",
    own_sid: OWN_TRANSCRIPT,
  },
  session_fork_origin: gated("fork", ["not_found"]),
  session_last_live_remove: userLocal([]),
  dir_list: {
    ...userLocal(["path_forbidden", "not_found"]),
    roles: AGENT_AND_USER,
    scope: "role",
    own_sid: OWN_FILES,
  },
  file_read: {
    ...userLocal(["path_forbidden", "not_found"]),
    roles: AGENT_AND_USER,
    scope: "role",
    own_sid: OWN_FILES,
  },
  file_write: userLocal(["path_not_writable", "file_exists"]),
  file_create: userLocal(["file_exists", "path_forbidden"]),
  file_edit: userLocal(["file_conflict", "not_a_text_file"]),
  file_delete: userLocal(["path_forbidden", "not_found"]),
  file_find: userLocal(["path_forbidden"]),
  file_stat_batch: userLocal([]),
  dir_tree: gated("launcher", []),
  launcher_config_read: gated("launcher", []),
  launcher_run: gated("launcher", []),
  sandbox_grant: gated("sandbox", ["path_forbidden"]),
  sandbox_revoke: gated("sandbox", []),
  translate_run: gated("translate", ["translate_helper_failed"]),
  llm_usage_read: gated("llm_usage", []),
  llm_stats_read: gated("llm_stats", []),
  // The only cluster control ops: instances replicate the store, so any of
  // them answers.
  kv_read: { ...userLocal(["not_found"]), locality: "cluster" },
  kv_write: { ...userLocal([]), locality: "cluster" },
  kv_delete: { ...userLocal([]), locality: "cluster" },
} as const satisfies Record<string, OpAttributes>;

export type OpName = keyof typeof OP_ATTRIBUTES;
/** Every op this implementation serves, extensions included. */
export const OP_NAMES = Object.keys(OP_ATTRIBUTES) as readonly OpName[];
/** The 46 ops of wire generation 3. */
export const GENERATION_OP_NAMES = OP_NAMES.filter(
  (op) => (OP_ATTRIBUTES[op] as OpAttributes).extension !== true,
);

const opNames: ReadonlySet<string> = new Set(OP_NAMES);
export function isOpName(value: unknown): value is OpName {
  return typeof value === "string" && opNames.has(value);
}

export function opAttributes(op: OpName): OpAttributes {
  return OP_ATTRIBUTES[op];
}

/** What gates the use of an op or a topic. */
export interface Gated {
  readonly roles: readonly Role[];
  readonly needs_hello?: boolean;
  readonly capability?: Capability;
}

/**
 * The one gate, for ops (dispatch stages 3–5) and topics (`topic_subscribe`)
 * alike: `hello_required` → `forbidden` → `capability_unavailable`, read from
 * the row; `undefined` when the caller may go on.
 */
export function gateRefusal(
  subject: string,
  attrs: Gated,
  role: Role | undefined,
  capabilities: ReadonlySet<Capability>,
): ErrorBody | undefined {
  if (attrs.needs_hello === true && role === undefined) {
    return { code: "hello_required", msg: `${subject} needs a hello first` };
  }
  if (role !== undefined && !attrs.roles.includes(role)) {
    return { code: "forbidden", msg: `${subject} is not open to role ${role}` };
  }
  if (attrs.capability !== undefined && !capabilities.has(attrs.capability)) {
    return {
      code: "capability_unavailable",
      msg: `${subject} needs capability ${attrs.capability}`,
    };
  }
  return undefined;
}

/**
 * Scope `role` for a row with `own_sid` (the start of stage 7, on the
 * instance that answers — after forwarding, so the owner judges a forwarded
 * caller as itself): a session naming another session's sid is refused with
 * the row's code; `undefined` when the caller may go on.
 */
export function ownSidRefusal(
  attrs: OpAttributes,
  caller: Identity | undefined,
  sid: unknown,
): ErrorBody | undefined {
  if (attrs.own_sid === undefined || caller?.role !== "session" || sid === caller.sid)
    return undefined;
  return { code: attrs.own_sid.code, msg: `a session may read only its own ${attrs.own_sid.of}` };
}

type RolesOf<Op extends OpName> = (typeof OP_ATTRIBUTES)[Op]["roles"][number];

/** Who can be calling `op`, as its row allows: a handler of a session-only op
 * is given a session, with its sid, and needs no check of its own. */
export type CallerOf<Op extends OpName> = (typeof OP_ATTRIBUTES)[Op]["needs_hello"] extends true
  ? Extract<Identity, { role: RolesOf<Op> }>
  : Identity | undefined;

export function opsOfPlane(plane: Plane): OpName[] {
  return OP_NAMES.filter((op) => OP_ATTRIBUTES[op].plane === plane);
}

/**
 * Every code an op may answer besides the connection-level ones, in the order
 * of contract §3.2: `invalid_args`; the declared codes; then what the row
 * implies. Derived, so adding a capability cannot leave a list out of date.
 */
export function opErrors(op: OpName): ErrorCode[] {
  const a: OpAttributes = OP_ATTRIBUTES[op];
  const out: ErrorCode[] = ["invalid_args", ...a.errors];
  if (a.needs_hello) out.push("hello_required");
  if (a.roles.length < ROLES.length) out.push("forbidden");
  if (a.capability !== undefined) out.push("capability_unavailable");
  if (a.locality === "instance-local") out.push("instance_unreachable");
  return out;
}

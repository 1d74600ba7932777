import { describe, expect, it } from "vitest";
import {
  CAPABILITIES,
  CONNECTION_CODES,
  DERIVED_CODES,
  ERROR_CODES,
  GENERATION_OP_NAMES,
  GENERATION_TOPIC_KINDS,
  OP_ATTRIBUTES,
  OP_NAMES,
  OP_SCHEMAS,
  type OpAttributes,
  opErrors,
  opsOfPlane,
  ROLES,
  TOPIC_ATTRIBUTES,
  TOPIC_GRANULARITIES,
  TOPIC_KINDS,
  TOPIC_SCHEMAS,
} from "../../src/contract/index.js";

const rows = Object.entries(OP_ATTRIBUTES) as [keyof typeof OP_ATTRIBUTES, OpAttributes][];

describe("the op attribute table", () => {
  it("holds 46 ops of generation 3: common 13, messaging 4, control 29, mesh none", () => {
    const generation = (plane: Parameters<typeof opsOfPlane>[0]) =>
      opsOfPlane(plane).filter((op) => GENERATION_OP_NAMES.includes(op));
    expect(GENERATION_OP_NAMES).toHaveLength(46);
    expect(generation("common")).toHaveLength(13);
    expect(generation("messaging")).toHaveLength(4);
    expect(generation("control")).toHaveLength(29);
    expect(generation("mesh")).toHaveLength(0);
  });

  it("adds the documented extensions: receipts_read (DR-0054), the person's inbox (DR-0056), a session's answer and a person's reading, and the attention queue (DR-0062)", () => {
    expect(OP_NAMES.filter((op) => !GENERATION_OP_NAMES.includes(op)).sort()).toEqual([
      "attention_decide",
      "attention_grant",
      "attention_grants",
      "attention_read",
      "attention_revoke",
      "notifications_mark_read",
      "notifications_read",
      "notify_reply",
      "receipts_read",
    ]);
    expect(OP_ATTRIBUTES.notify_reply.roles).toEqual(["session"]);
    expect(OP_ATTRIBUTES.notifications_read.roles).toEqual(["user"]);
    expect(OP_ATTRIBUTES.notifications_mark_read.roles).toEqual(["user"]);
    for (const op of ["notify_reply", "notifications_read", "notifications_mark_read"] as const)
      expect(opErrors(op).join(", ")).toBe("invalid_args, hello_required, forbidden");
    // The person's grants: theirs alone to give and take back (DR-0062).
    expect(OP_ATTRIBUTES.attention_grant.roles).toEqual(["user"]);
    expect(OP_ATTRIBUTES.attention_revoke.roles).toEqual(["user"]);
    expect(OP_ATTRIBUTES.attention_grants.roles).toEqual(["session", "user"]);
    // A decision names its session: forwarded to the instance holding its hook.
    expect(opErrors("attention_decide").join(", ")).toBe(
      "invalid_args, session_not_found, not_found, hello_required, forbidden, instance_unreachable",
    );
  });

  it("no op has an empty roles list", () => {
    expect(rows.filter(([, a]) => a.roles.length === 0).map(([op]) => op)).toEqual([]);
  });

  it("the only cluster control ops of generation 3 are the three kv_* ops", () => {
    const cluster = rows.filter(
      ([, a]) => a.plane === "control" && a.locality === "cluster" && a.extension !== true,
    );
    expect(cluster.map(([op]) => op).sort()).toEqual(["kv_delete", "kv_read", "kv_write"]);
  });

  it("exactly hello, instance_ping and the four HTTP auth ops need no hello", () => {
    const open = rows.filter(([, a]) => !a.needs_hello).map(([op]) => op);
    expect(open.sort()).toEqual(
      [
        "auth_assert",
        "auth_challenge",
        "auth_refresh_token",
        "auth_register",
        "hello",
        "instance_ping",
      ].sort(),
    );
  });

  it("exactly the four HTTP auth ops are carried over HTTP", () => {
    const http = rows.filter(([, a]) => a.carrier === "http").map(([op]) => op);
    expect(http.sort()).toEqual([
      "auth_assert",
      "auth_challenge",
      "auth_refresh_token",
      "auth_register",
    ]);
  });

  it("every control op needs a greeting", () => {
    expect(
      rows.filter(([, a]) => a.plane === "control" && !a.needs_hello).map(([op]) => op),
    ).toEqual([]);
  });

  it("no row declares a rule-derived or connection-level code by hand", () => {
    const banned = new Set<string>([...DERIVED_CODES, ...CONNECTION_CODES]);
    const offenders = rows.flatMap(([op, a]) =>
      a.errors.filter((c) => banned.has(c)).map((c) => `${op}: ${c}`),
    );
    expect(offenders).toEqual([]);
  });

  it("every op has request and response schemas of its own, and every schema an op", () => {
    expect(Object.keys(OP_SCHEMAS).sort()).toEqual([...OP_NAMES].sort());
    const misplaced: string[] = [];
    for (const op of OP_NAMES) {
      const { request, response } = OP_SCHEMAS[op];
      if (request.title !== `${op} request`) misplaced.push(`${op}: ${request.title}`);
      if (response.title !== `${op} response`) misplaced.push(`${op}: ${response.title}`);
    }
    expect(misplaced).toEqual([]);
  });

  it("capability-gated ops name only the nine capabilities", () => {
    expect(CAPABILITIES).toHaveLength(9);
    const used = new Set(rows.map(([, a]) => a.capability).filter((c) => c !== undefined));
    for (const c of used) expect(CAPABILITIES).toContain(c);
  });

  it("scope: role is carried by exactly the ops a session may call about others' data", () => {
    const scoped = rows.filter(([, a]) => a.scope === "role").map(([op]) => op);
    expect(scoped.sort()).toEqual([
      "dir_list",
      "file_read",
      "transcript_items_read",
      "transcript_read",
    ]);
  });

  it("own_sid narrows exactly the scope: role ops, with a code each op may answer", () => {
    const own = rows.filter(([, a]) => a.own_sid !== undefined);
    expect(own.map(([op]) => op)).toEqual(
      rows.filter(([, a]) => a.scope === "role").map(([op]) => op),
    );
    for (const [op, a] of own) expect(opErrors(op)).toContain(a.own_sid?.code);
  });
});

// The "Full errors" column of contract §4.2, as the spec states it: opErrors
// must derive exactly this from each row.
const FULL_ERRORS: Record<string, string> = {
  hello: "invalid_args",
  instance_ping: "invalid_args",
  instance_shutdown: "invalid_args, hello_required, forbidden, instance_unreachable",
  session_stopping: "invalid_args, hello_required, forbidden, instance_unreachable",
  topic_subscribe: "invalid_args, topic_unknown, hello_required",
  topic_unsubscribe: "invalid_args, topic_unknown, hello_required",
  auth_challenge: "invalid_args",
  auth_register: "invalid_args, auth_invalid, auth_expired, auth_unknown_issuer",
  auth_assert: "invalid_args, auth_invalid, auth_expired, auth_unknown_issuer",
  auth_refresh_token: "invalid_args, auth_invalid, auth_expired, auth_unknown_issuer",
  auth_refresh: "invalid_args, auth_invalid, auth_expired, hello_required, forbidden",
  auth_resolve:
    "invalid_args, auth_invalid, auth_expired, hello_required, forbidden, instance_unreachable",
  auth_rotate:
    "invalid_args, auth_invalid, auth_expired, hello_required, forbidden, instance_unreachable",
  message_send: "invalid_args, session_not_found, hello_required, forbidden",
  // Extension (DR-0054), not in the spec.
  receipts_read: "invalid_args, hello_required, forbidden",
  say_post: "invalid_args, hello_required, forbidden",
  say_mark_read: "invalid_args, hello_required, forbidden",
  notify_send: "invalid_args, hello_required, forbidden",
  session_kill: "invalid_args, session_not_found, hello_required, forbidden, instance_unreachable",
  session_rename:
    "invalid_args, session_not_found, hello_required, forbidden, capability_unavailable, instance_unreachable",
  session_env_read:
    "invalid_args, session_not_found, hello_required, forbidden, instance_unreachable",
  session_search: "invalid_args, hello_required, forbidden, instance_unreachable",
  session_dump_write: "invalid_args, not_found, hello_required, forbidden, instance_unreachable",
  dump_presets_read: "invalid_args, hello_required, forbidden, instance_unreachable",
  transcript_read: "invalid_args, not_found, hello_required, forbidden, instance_unreachable",
  transcript_items_read: "invalid_args, not_found, hello_required, forbidden, instance_unreachable",
  session_fork_origin:
    "invalid_args, not_found, hello_required, forbidden, capability_unavailable, instance_unreachable",
  session_last_live_remove: "invalid_args, hello_required, forbidden, instance_unreachable",
  dir_list:
    "invalid_args, path_forbidden, not_found, hello_required, forbidden, instance_unreachable",
  file_read:
    "invalid_args, path_forbidden, not_found, hello_required, forbidden, instance_unreachable",
  file_write:
    "invalid_args, path_not_writable, file_exists, hello_required, forbidden, instance_unreachable",
  file_create:
    "invalid_args, file_exists, path_forbidden, hello_required, forbidden, instance_unreachable",
  file_edit:
    "invalid_args, file_conflict, not_a_text_file, hello_required, forbidden, instance_unreachable",
  file_delete:
    "invalid_args, path_forbidden, not_found, hello_required, forbidden, instance_unreachable",
  file_find: "invalid_args, path_forbidden, hello_required, forbidden, instance_unreachable",
  file_stat_batch: "invalid_args, hello_required, forbidden, instance_unreachable",
  dir_tree: "invalid_args, hello_required, forbidden, capability_unavailable, instance_unreachable",
  launcher_config_read:
    "invalid_args, hello_required, forbidden, capability_unavailable, instance_unreachable",
  launcher_run:
    "invalid_args, hello_required, forbidden, capability_unavailable, instance_unreachable",
  sandbox_grant:
    "invalid_args, path_forbidden, hello_required, forbidden, capability_unavailable, instance_unreachable",
  sandbox_revoke:
    "invalid_args, hello_required, forbidden, capability_unavailable, instance_unreachable",
  translate_run:
    "invalid_args, translate_helper_failed, hello_required, forbidden, capability_unavailable, instance_unreachable",
  llm_usage_read:
    "invalid_args, hello_required, forbidden, capability_unavailable, instance_unreachable",
  llm_stats_read:
    "invalid_args, hello_required, forbidden, capability_unavailable, instance_unreachable",
  kv_read: "invalid_args, not_found, hello_required, forbidden",
  kv_write: "invalid_args, hello_required, forbidden",
  kv_delete: "invalid_args, hello_required, forbidden",
};

describe("opErrors", () => {
  it("derives the spec's full error list of every op, in the spec's order", () => {
    const mismatches = GENERATION_OP_NAMES.filter(
      (op) => opErrors(op).join(", ") !== FULL_ERRORS[op],
    ).map((op) => `${op}: got ${opErrors(op).join(", ")}`);
    expect(mismatches).toEqual([]);
  });

  it("never lists a connection-level code", () => {
    for (const op of OP_NAMES) {
      for (const c of CONNECTION_CODES) expect(opErrors(op)).not.toContain(c);
    }
  });
});

describe("error codes", () => {
  it("are the closed list of 20, without the later generations' codes", () => {
    expect(ERROR_CODES).toHaveLength(20);
    expect(new Set(ERROR_CODES).size).toBe(20);
    for (const later of ["rate_limited", "session_duplicated", "ambiguous_run", "auth_in_use"]) {
      expect(ERROR_CODES).not.toContain(later);
    }
  });

  it("include internal_error as a connection-level code", () => {
    expect(CONNECTION_CODES).toContain("internal_error");
  });
});

describe("the topic attribute table", () => {
  it("holds the 12 kinds of generation 3, plus the documented work_items, receipts and attention extensions", () => {
    expect(GENERATION_TOPIC_KINDS).toHaveLength(12);
    expect(TOPIC_KINDS.filter((k) => !GENERATION_TOPIC_KINDS.includes(k))).toEqual([
      "work_items",
      "receipts",
      "attention",
    ]);
    for (const kind of TOPIC_KINDS) {
      expect(TOPIC_ATTRIBUTES[kind].roles.length, kind).toBeGreaterThan(0);
      expect(TOPIC_GRANULARITIES, kind).toContain(TOPIC_ATTRIBUTES[kind].granularity);
    }
  });

  it("has a frame schema for every kind and a kind for every frame schema", () => {
    expect(Object.keys(TOPIC_SCHEMAS).sort()).toEqual([...TOPIC_KINDS].sort());
  });

  it("lets no person hold auth_records", () => {
    const noUser = TOPIC_KINDS.filter(
      (k) => !(TOPIC_ATTRIBUTES[k].roles as readonly string[]).includes("user"),
    );
    expect(noUser).toEqual(["auth_records"]);
  });

  it("names only roles of the contract", () => {
    for (const kind of TOPIC_KINDS) {
      for (const r of TOPIC_ATTRIBUTES[kind].roles) expect(ROLES).toContain(r);
    }
  });
});

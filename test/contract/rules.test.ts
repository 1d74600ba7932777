import { describe, expect, it } from "vitest";
import { FIXTURE_IDS, fixture, OP_FIXTURES } from "../../src/contract/fixtures/index.js";
import {
  Base64Url,
  cacheWindowEnd,
  canonicalEndpoint,
  decideMainSeries,
  type HelloArgs,
  helloRoleViolations,
  isAcceptedTranscriptPath,
  isValid,
  KvKey,
  LLM_PROMPT_CACHE_TTL_MS,
  OP_ATTRIBUTES,
  OP_SCHEMAS,
  PeerInfo,
  parseTopic,
  requestErrors,
  Sender,
  TITLE_MAX_CHARS,
  TOPIC_PATTERN,
  topicKind,
  USER_SENDER,
} from "../../src/contract/index.js";

const { sidA: A, sidB: B, instance: I } = FIXTURE_IDS;

describe("the 0.3.1 → 0.5.0 checklist", () => {
  it("session_stopping: common, session only, needs hello, instance-local, no declared errors", () => {
    expect(OP_ATTRIBUTES.session_stopping).toEqual({
      plane: "common",
      roles: ["session"],
      needs_hello: true,
      locality: "instance-local",
      errors: [],
    });
    const req = fixture(OP_FIXTURES.session_stopping.request);
    expect(requestErrors("session_stopping", { ...req, reason: "" })).not.toEqual([]);
    expect(requestErrors("session_stopping", { op: "session_stopping", request_id: "1" })).toEqual(
      [],
    );
    expect(isValid(OP_SCHEMAS.session_stopping.response, { ok: true, request_id: "1" })).toBe(
      false,
    );
  });

  it("Sender is a sid or the literal user, with $id Sender", () => {
    expect(USER_SENDER).toBe("user");
    expect(Sender.$id).toBe("Sender");
    expect(isValid(Sender, "user")).toBe(true);
    expect(isValid(Sender, A)).toBe(true);
    expect(isValid(Sender, "User")).toBe(false);
    expect(isValid(Sender, A.toUpperCase())).toBe(false);
  });

  it("PeerInfo carries title and gateway_active_at", () => {
    expect(Object.keys(PeerInfo.properties)).toEqual(
      expect.arrayContaining(["title", "gateway_active_at"]),
    );
  });
});

describe("hello role rules", () => {
  const hello = (extra: Record<string, unknown>) => ({
    op: "hello",
    request_id: "1",
    protocol_version: 3,
    ...extra,
  });
  const mesh = {
    ver: 1,
    iss: "https://a.example/",
    aud: "https://b.example/",
    id: I,
    kid: "0123456789abcdef01",
  };

  it("accepts each role with exactly its own fields", () => {
    expect(requestErrors("hello", hello({ role: "session", sid: A }))).toEqual([]);
    expect(requestErrors("hello", hello({ role: "user" }))).toEqual([]);
    expect(requestErrors("hello", hello({ role: "instance", mesh }))).toEqual([]);
  });

  it("refuses a missing field or a field of another role", () => {
    const refused = [
      hello({ role: "session" }),
      hello({ role: "session", sid: A, mesh }),
      hello({ role: "user", sid: A }),
      hello({ role: "user", mesh }),
      hello({ role: "instance" }),
      hello({ role: "instance", mesh, sid: A }),
    ];
    for (const r of refused) expect(requestErrors("hello", r), JSON.stringify(r)).not.toEqual([]);
  });

  it("states the rule as path: message lines", () => {
    expect(helloRoleViolations({ role: "user", protocol_version: 3, sid: A } as HelloArgs)).toEqual(
      ["/sid: not allowed when role is user (a person speaks for no one session)"],
    );
  });
});

describe("topic names", () => {
  it("kind is the part before the first colon, for defined names only", () => {
    expect(topicKind("peers")).toBe("peers");
    expect(topicKind(`transcript_items:${B}`)).toBe("transcript_items");
    expect(topicKind(`transcript:${B}`)).toBe("transcript");
    expect(topicKind("kv:webui")).toBe("kv");
    expect(parseTopic("kv:webui")).toEqual({ name: "kv:webui", kind: "kv", param: "webui" });
    for (const bad of [
      "nonsense:topic",
      "peers:x",
      "kv:",
      "kv:9x",
      `inbox:${B}`,
      "transcript:short",
      "",
      "x".repeat(5000),
    ]) {
      expect(topicKind(bad), bad).toBeUndefined();
    }
  });

  it("the pattern is anchored at both ends", () => {
    const re = new RegExp(TOPIC_PATTERN);
    expect(re.test("peers")).toBe(true);
    expect(re.test("peersx")).toBe(false);
    expect(re.test("xpeers")).toBe(false);
  });
});

describe("length limits count code points", () => {
  it("a title of 200 emoji is within TITLE_MAX_CHARS and 201 is not", () => {
    const rename = (title: string) => ({ op: "session_rename", request_id: "1", sid: A, title });
    expect(requestErrors("session_rename", rename("🦊".repeat(TITLE_MAX_CHARS)))).toEqual([]);
    expect(requestErrors("session_rename", rename("🦊".repeat(TITLE_MAX_CHARS + 1)))).not.toEqual(
      [],
    );
    expect(requestErrors("session_rename", rename("a".repeat(TITLE_MAX_CHARS + 1)))).not.toEqual(
      [],
    );
  });

  it("KV keys are 1–256 characters without control characters", () => {
    expect(isValid(KvKey, "a")).toBe(true);
    expect(isValid(KvKey, "é".repeat(256))).toBe(true);
    expect(isValid(KvKey, "x".repeat(257))).toBe(false);
    expect(isValid(KvKey, "")).toBe(false);
    expect(isValid(KvKey, "a\nb")).toBe(false);
    expect(isValid(KvKey, "a\u0000")).toBe(false);
    expect(isValid(KvKey, "a\u007f")).toBe(true);
  });

  it("Base64Url refuses padding", () => {
    expect(isValid(Base64Url, "abc_-")).toBe(true);
    expect(isValid(Base64Url, "abc=")).toBe(false);
  });
});

describe("endpoints", () => {
  it("canonicalises host case and default ports and requires the trailing slash", () => {
    expect(canonicalEndpoint("https://Example.COM:443/ccmsg/")).toBe("https://example.com/ccmsg/");
    expect(canonicalEndpoint("http://127.0.0.1:80/")).toBe("http://127.0.0.1/");
    expect(canonicalEndpoint("http://[::1]:7077/")).toBe("http://[::1]:7077/");
    expect(canonicalEndpoint("https://example.com/ccmsg")).toBeUndefined();
    expect(canonicalEndpoint("https://example.com/?q=1")).toBeUndefined();
    expect(canonicalEndpoint("https://example.com/#f")).toBeUndefined();
    expect(canonicalEndpoint("ws://example.com/")).toBeUndefined();
  });
});

describe("the LlmRequestInfo.main rule", () => {
  it("a stated origin decides", () => {
    expect(
      decideMainSeries([
        { sid: A, prefix: "p", origin: "main", received_at: 1 },
        { sid: A, prefix: "q", origin: "subagent", received_at: 2 },
      ]),
    ).toEqual([true, false]);
  });

  it("a prefix shared by two sessions is a sub-agent's; the first-used unshared series wins", () => {
    const verdict = decideMainSeries([
      { sid: A, prefix: "shared", received_at: 1 },
      { sid: B, prefix: "shared", received_at: 2 },
      { sid: A, prefix: "late", received_at: 9 },
      { sid: A, prefix: "early", received_at: 5 },
    ]);
    expect(verdict).toEqual([false, true, false, true]);
  });

  it("first use comes from history when given", () => {
    const verdict = decideMainSeries(
      [
        { sid: A, prefix: "x", received_at: 100 },
        { sid: A, prefix: "y", received_at: 50 },
      ],
      (_sid, prefix) => (prefix === "x" ? 1 : 40),
    );
    expect(verdict).toEqual([true, false]);
  });

  it("when every series is shared, the newest is marked", () => {
    const verdict = decideMainSeries([
      { sid: A, prefix: "s1", received_at: 1 },
      { sid: A, prefix: "s2", received_at: 7 },
      { sid: B, prefix: "s1", received_at: 3 },
      { sid: B, prefix: "s2", received_at: 4 },
    ]);
    expect(verdict).toEqual([false, true, false, true]);
  });

  it("the cache window ends at the stated expiry, at receipt with an origin, else after the TTL", () => {
    expect(cacheWindowEnd({ sid: A, received_at: 10, cache_expires_at: 99 })).toBe(99);
    expect(cacheWindowEnd({ sid: A, received_at: 10, origin: "main" })).toBe(10);
    expect(cacheWindowEnd({ sid: A, received_at: 10 })).toBe(10 + LLM_PROMPT_CACHE_TTL_MS);
  });
});

describe("the transcript_path acceptance rule", () => {
  const home = "/home/dev/.claude";
  it("accepts only paths inside the config home's projects/ tree", () => {
    expect(isAcceptedTranscriptPath(`${home}/projects/-x/${A}.jsonl`, home)).toBe(true);
    expect(isAcceptedTranscriptPath(`${home}/projects/-x/${A}.jsonl`, `${home}/`)).toBe(true);
    expect(isAcceptedTranscriptPath(`${home}/projects/`, home)).toBe(false);
    expect(isAcceptedTranscriptPath(`${home}/projectsx/a.jsonl`, home)).toBe(false);
    expect(isAcceptedTranscriptPath(`${home}/settings.json`, home)).toBe(false);
    expect(isAcceptedTranscriptPath(`${home}/projects/../settings.json`, home)).toBe(false);
    expect(isAcceptedTranscriptPath("/etc/passwd", home)).toBe(false);
    expect(isAcceptedTranscriptPath("projects/a.jsonl", "projects")).toBe(false);
  });
});

describe("argument rules beyond the schema", () => {
  it("transcript reads take at most one lower and one upper bound", () => {
    const base = { op: "transcript_items_read", request_id: "1", sid: A };
    expect(requestErrors("transcript_items_read", { ...base, since_at: 1 })).toEqual([]);
    expect(
      requestErrors("transcript_items_read", { ...base, since_at: 1, since_uuid: "u" }),
    ).toEqual(["/since_uuid: only one lower bound (since_at, since_uuid)"]);
    expect(
      requestErrors("transcript_read", {
        op: "transcript_read",
        request_id: "1",
        sid: A,
        agent_id: "a",
        teammate: "t",
      }),
    ).toEqual(["/teammate: not allowed with agent_id"]);
  });
});

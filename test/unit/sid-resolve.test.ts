import { describe, expect, it } from "vitest";
import { inWords } from "../../src/client/arg-words.js";
import { type KnownSession, SidRefusal } from "../../src/client/sid-refusal.js";
import { knownSessions, resolveSid } from "../../src/client/sid-resolve.js";
import { ContractError } from "../../src/contract/errors.js";

// What a person types for a session (issue 25 item 7): a whole sid, a unique
// prefix of 4+ hex digits, a title or @title.

const HERE = "a".repeat(32);
const THERE = "b".repeat(32);

function session(sid: string, extra: Partial<KnownSession> = {}): KnownSession {
  return { sid, instance: HERE, repo: "acme/widgets", ws: "main", live: true, ...extra };
}

const ALPHA = session("f2d00f93-1a2b-4c3d-8e4f-000000000001", { title: "alpha" });
const BETA = session("f2d0a1b2-1a2b-4c3d-8e4f-000000000002", { title: "beta", ws: "feat" });
const GAMMA = session("0c0ffee0-1a2b-4c3d-8e4f-000000000003", { title: "beta", live: false });
const ALL = [ALPHA, BETA, GAMMA];

/** The refusal `resolveSid` throws (fails the test when it resolves). */
function refusal(typed: string, sessions: KnownSession[] = ALL, what = "the recipient") {
  try {
    resolveSid(typed, sessions, what);
  } catch (error) {
    expect(error).toBeInstanceOf(SidRefusal);
    return error as SidRefusal;
  }
  throw new Error(`${typed} resolved`);
}

describe("resolving a typed session", () => {
  it("a whole sid is taken as it is, in lower case, looked up nowhere", () => {
    const sid = "0123abcd-0000-4000-8000-0000000000ff";
    expect(resolveSid(sid, [], "the recipient")).toBe(sid);
    expect(resolveSid(sid.toUpperCase(), [], "the recipient")).toBe(sid);
  });

  it("a unique prefix of 4 or more hex digits names its session, dashes optional", () => {
    expect(resolveSid("f2d00f93", ALL, "the recipient")).toBe(ALPHA.sid);
    expect(resolveSid("0c0f", ALL, "the recipient")).toBe(GAMMA.sid);
    expect(resolveSid("F2D0A", ALL, "the recipient")).toBe(BETA.sid);
    expect(resolveSid("f2d00f93-1a", ALL, "the recipient")).toBe(ALPHA.sid);
    expect(resolveSid("f2d00f931a2b", ALL, "the recipient")).toBe(ALPHA.sid);
  });

  it("an ambiguous prefix is refused, naming the argument and listing every candidate", () => {
    const e = refusal("f2d0");
    expect(e.code).toBe("invalid_args");
    expect(e.message).toMatch(/^the recipient "f2d0" matches 2 sessions/);
    expect(e.message).toContain('f2d00f93: live, "alpha", acme/widgets/main');
    expect(e.message).toContain('f2d0a1b2: live, "beta", acme/widgets/feat');
    expect(e.candidates.map((c) => c.sid)).toEqual([ALPHA.sid, BETA.sid]);
  });

  it("candidates sharing 8 characters are shown with as many as tell them apart, and their instance when they differ", () => {
    const one = session("abcdef01-2345-4000-8000-000000000001");
    const two = session("abcdef01-2399-4000-8000-000000000002", { instance: THERE });
    const e = refusal("abcdef", [one, two]);
    expect(e.message.split("\n").slice(1)).toEqual([
      "  abcdef01-234: live, untitled, acme/widgets/main, on instance aaaaaaaa",
      "  abcdef01-239: live, untitled, acme/widgets/main, on instance bbbbbbbb",
    ]);
  });

  it("fewer than 4 hex digits is too short, and says what would do", () => {
    const e = refusal("f2d", ALL, "the session");
    expect(e.code).toBe("invalid_args");
    expect(e.message).toBe(
      'the session "f2d" is too short: give at least 4 hex digits of a session id, or a session\'s title (@title)',
    );
  });

  it("a prefix no sid has is refused as not found", () => {
    const e = refusal("dead");
    expect(e.code).toBe("session_not_found");
    expect(e.message).toContain('the recipient "dead" is not a session id, prefix or title known');
  });

  it("an exact title, or @title, names the session with that title", () => {
    expect(resolveSid("alpha", ALL, "the recipient")).toBe(ALPHA.sid);
    expect(resolveSid("@alpha", ALL, "the recipient")).toBe(ALPHA.sid);
    // Exact: neither a part of a title nor another case.
    expect(refusal("alph").code).toBe("invalid_args");
    expect(refusal("@Alpha").code).toBe("session_not_found");
    // A title that looks like hex is found as a title too; @ asks for the title only.
    const hexTitled = session("99999999-0000-4000-8000-000000000009", { title: "beef" });
    const beefy = session("beef0000-0000-4000-8000-000000000010");
    expect(refusal("beef", [hexTitled, beefy]).candidates).toHaveLength(2);
    expect(resolveSid("@beef", [hexTitled, beefy], "the recipient")).toBe(hexTitled.sid);
    // A short word that is a title is no prefix too short.
    const ab = session("12345678-0000-4000-8000-000000000011", { title: "ab" });
    expect(resolveSid("ab", [ab], "the recipient")).toBe(ab.sid);
  });

  it("a title shared by live sessions is ambiguous; of one live and others ended the live one wins", () => {
    const twin = session("77777777-0000-4000-8000-000000000007", { title: "beta" });
    const e = refusal("@beta", [BETA, twin, GAMMA]);
    expect(e.code).toBe("invalid_args");
    expect(e.message).toMatch(/^the recipient "@beta" matches 3 sessions/);
    expect(e.message).toContain('0c0ffee0: ended, "beta"');
    // GAMMA ended, BETA live: the live one.
    expect(resolveSid("@beta", ALL, "the recipient")).toBe(BETA.sid);
    expect(resolveSid("beta", ALL, "the recipient")).toBe(BETA.sid);
    // A command that wants an ended session asks for it.
    expect(resolveSid("@beta", ALL, "the session", "ended")).toBe(GAMMA.sid);
  });

  it("text that is neither a sid nor a title says so in words, never as a pattern", () => {
    const e = refusal("nope");
    expect(e.code).toBe("invalid_args");
    expect(e.message).toContain('the recipient "nope" is neither a session id');
    expect(e.message).toContain("a session id is a lower-case UUID");
    expect(e.message).not.toMatch(/\[0-9a-f\]|\^|\/to/);
    expect(refusal("@").message).toBe('the recipient "@" names no title: write @ and the title');
  });
});

describe("the sessions a peers value lists", () => {
  it("live and lost rows of every instance, each sid once, live when any instance lists it connected", () => {
    const row = (sid: string, instance: string, title?: string) => ({
      sid,
      instance,
      repo: "r",
      ws: "w",
      cwd: "/w",
      protocol_version: 3,
      ...(title === undefined ? {} : { title }),
    });
    const moved = "11111111-0000-4000-8000-000000000001";
    const lost = "22222222-0000-4000-8000-000000000002";
    const known = knownSessions({
      [HERE]: { peers: [], last_live: [{ ...row(moved, HERE, "old"), last_seen_at: 1 }] },
      [THERE]: {
        peers: [row(moved, THERE, "new")],
        last_live: [{ ...row(lost, THERE), last_seen_at: 1 }],
      },
    });
    expect(known).toEqual([
      { sid: moved, instance: THERE, repo: "r", ws: "w", title: "new", live: true },
      { sid: lost, instance: THERE, repo: "r", ws: "w", live: false },
    ]);
  });
});

describe("a bad argument in words", () => {
  it("the instance's JSON pointers become the argument's name; other failures stay", () => {
    const wire = new ContractError(
      "invalid_args",
      '/to: "f2d00f93" is not valid: a session id is a lower-case UUID\n/types/1: Expected string',
    );
    const worded = inWords("message_send", wire) as ContractError;
    expect(worded.code).toBe("invalid_args");
    expect(worded.message).toBe(
      'the recipient: "f2d00f93" is not valid: a session id is a lower-case UUID\nthe types (item 2): Expected string',
    );
    expect(
      (inWords("notify_send", new ContractError("invalid_args", "/sid: x")) as Error).message,
    ).toBe("the session the line is about: x");
    const other = new ContractError("session_not_found", "/to: gone");
    expect(inWords("message_send", other)).toBe(other);
  });
});

import { describe, expect, it } from "vitest";
import { refusalIn } from "../../src/harness/claude/messaging-socket.js";
import { DirectRoute, harnessMsgId } from "../../src/instance/messaging/direct-route.js";
import type { InboxStore } from "../../src/store/inbox.js";
import { silentLogger } from "../../src/util/logger.js";
import { FakeHarness } from "../helpers/fake-harness.js";
import { isolatedHome } from "../helpers/instance.js";

// Route (a)'s pieces that an instance test cannot reach: the receipt reader,
// the frame's msg_id, and the budget for finding the state file.

const ID = "0b6c2a52-56a8-4f7e-9d7c-5a3d4c1e2f10";

describe("receipts on the status socket", () => {
  it("names a refusal of our message in Claude Code's control frame and the spec's bare one", () => {
    const control = (fields: Record<string, unknown>) =>
      JSON.stringify({ type: "control", action: "peer_message_status", ...fields });
    expect(refusalIn(control({ status: "held", orig_msg_id: ID }), ID)).toBe("held");
    expect(
      refusalIn(control({ status: "expired", status_detail: "refused", orig_msg_id: ID }), ID),
    ).toBe("expired");
    expect(
      refusalIn(control({ status: "dropped", orig_msg_id: "x", dropped_msg_ids: [ID] }), ID),
    ).toBe("dropped");
    expect(
      refusalIn(
        JSON.stringify({ type: "peer_message_status", status: "refused", orig_msg_id: ID }),
        ID,
      ),
    ).toBe("refused");
  });

  it("ignores what is not a refusal of our message", () => {
    const control = (fields: Record<string, unknown>) =>
      JSON.stringify({ type: "control", action: "peer_message_status", ...fields });
    expect(refusalIn(control({ status: "delivered", orig_msg_id: ID }), ID)).toBeUndefined();
    expect(refusalIn(control({ status: "refused", orig_msg_id: "another" }), ID)).toBeUndefined();
    expect(
      refusalIn(
        JSON.stringify({ type: "control", action: "rename", status: "refused", orig_msg_id: ID }),
        ID,
      ),
    ).toBeUndefined();
    expect(refusalIn("not json", ID)).toBeUndefined();
  });
});

describe("the frame's msg_id", () => {
  it("is a UUID (the only form Claude Code keeps and names in receipts), the same for the same mid", () => {
    const id = harnessMsgId("inst-1/42");
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(harnessMsgId("inst-1/42")).toBe(id);
    expect(harnessMsgId("inst-1/43")).not.toBe(id);
  });
});

describe("finding the recipient's state file", () => {
  it("a lookup slower than its budget makes route (a) unavailable, even if it would have found a live socket", async () => {
    const { env } = isolatedHome();
    const home = env.CLAUDE_CONFIG_DIR!;
    const sid = "5e1f0b1c-7a39-4c55-8d8e-0f5b2a9c3d41";
    const harness = await FakeHarness.start({ configHome: home, sid });
    const row = {
      pid: harness.pid,
      sessionId: sid,
      peerProtocol: 1,
      messagingSocketPath: harness.socketPath,
    };
    const calls: string[] = [];
    const route = new DirectRoute(
      {
        enabled: true,
        harness: "claude",
        home,
        codexCommand: "codex",
        env: {},
        find: () => new Promise((r) => setTimeout(() => r(row), 1500)),
      },
      {} as InboxStore,
      {
        hold: async () => {
          calls.push("hold");
          return { delivered: false, reason: "throttled" };
        },
        recordDelivered: async () => {
          calls.push("recordDelivered");
        },
        offerElsewhere: () => calls.push("offerElsewhere"),
        claimedElsewhere: () => new Set<number>(),
        behind: () => false,
        delivered: () => {},
      },
      () => Date.now(),
      silentLogger,
    );
    const message = {
      mid: "i/1",
      from: "user",
      from_label: "user",
      text: "hi",
      sent_at: Date.now(),
    };
    expect(await route.send(sid, 1, message)).toBeUndefined();
    expect(calls).toEqual([]);
    expect(harness.auths).toEqual([]);
    // The same lookup within budget delivers (the route itself works).
    const quick = new DirectRoute(
      {
        enabled: true,
        harness: "claude",
        home,
        codexCommand: "codex",
        env: {},
        find: async () => row,
      },
      {
        claimOldest: () => undefined,
        claimNew: () => true,
        dropClaim: () => {},
      } as unknown as InboxStore,
      {
        hold: async () => ({ delivered: false, reason: "throttled" }),
        recordDelivered: async () => {
          calls.push("recordDelivered");
        },
        offerElsewhere: () => {},
        claimedElsewhere: () => new Set<number>(),
        behind: () => false,
        delivered: () => {},
      },
      () => Date.now(),
      silentLogger,
    );
    expect(await quick.send(sid, 2, { ...message, mid: "i/2" })).toEqual({ delivered: true });
    expect(calls).toEqual(["recordDelivered"]);
    await harness.taken(1);
    await harness.stop();
  });
});

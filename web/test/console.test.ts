import fc from "fast-check";
import type { VNode } from "preact";
import { describe, expect, it } from "vitest";
import type { AttentionItem } from "../../src/contract/attention.js";
import { messageStatus, type Receipt } from "../src/lib/message-status.js";
import {
  foldNotes,
  type Item,
  joinLive,
  rowsOf,
  type Seen,
  withAttention,
} from "../src/lib/timeline-rows.js";
import { Markdown, safeUrl } from "../src/ui/markdown.js";

// The web console's pure parts, without a browser: the Markdown renderer
// (content never becomes markup) and the timeline's rows (calls folded with
// results, snapshots joined across reconnects). The rest runs in Chromium
// (test/e2e/).

/** Every element a rendered text may contain. */
const ALLOWED = new Set([
  "div",
  "p",
  "strong",
  "em",
  "code",
  "pre",
  "a",
  "ul",
  "ol",
  "li",
  "blockquote",
  "hr",
]);

function walk(node: unknown, visit: (v: VNode) => void): void {
  if (Array.isArray(node)) {
    for (const n of node) walk(n, visit);
    return;
  }
  if (node === null || typeof node !== "object") return;
  const v = node as VNode;
  visit(v);
  walk((v.props as { children?: unknown }).children, visit);
}

function text(node: unknown): string {
  if (typeof node === "string" || typeof node === "number") return String(node);
  if (Array.isArray(node)) return node.map(text).join("");
  if (node === null || typeof node !== "object") return "";
  return text(((node as VNode).props as { children?: unknown }).children);
}

describe("the console's Markdown", () => {
  it("renders what a transcript uses", () => {
    const v = Markdown({
      text: "# Plan\n\n- **one** and `two`\n- [docs](https://example.com/x)\n\n```sh\nnpm test\n```",
    });
    const types: string[] = [];
    walk(v, (n) => types.push(String(n.type)));
    expect(types).toEqual(expect.arrayContaining(["ul", "li", "strong", "code", "a", "pre"]));
    expect(text(v)).toContain("npm test");
  });

  it("never turns content into markup, script or an unsafe link, whatever the text", () => {
    const piece = fc.constantFrom(
      "<script>alert(1)</script>",
      "<img src=x onerror=alert(1)>",
      "[x](javascript:alert(1))",
      "[y](data:text/html,hi)",
      "**",
      "*",
      "_",
      "`",
      "[",
      "](",
      ")",
      "# ",
      "- ",
      "1. ",
      "> ",
      "```",
      "\n",
      " ",
      "https://ok.example/a",
      "javascript:alert(1)",
      "word",
    );
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 40 }).map((p) => p.join("")),
        (input) => {
          walk(Markdown({ text: input }), (n) => {
            expect(typeof n.type).toBe("string");
            expect(ALLOWED.has(n.type as string)).toBe(true);
            const props = n.props as Record<string, unknown>;
            expect(props.dangerouslySetInnerHTML).toBeUndefined();
            if (n.type === "a")
              expect(["https:", "http:", "mailto:"]).toContain(
                new URL(String(props.href)).protocol,
              );
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it("keeps every character of the text (markup characters included) as text", () => {
    const t = '<b>not bold</b> & "quoted"';
    expect(text(Markdown({ text: t }))).toBe(t);
  });

  it("gets through a long text full of unmatched marks (a quadratic scan would not, in the test's time)", () => {
    const t = "[".repeat(30_000) + "`".repeat(20_000) + "_".repeat(10_000);
    expect(text(Markdown({ text: t }))).toBe(t);
  });

  it("allows only http(s) and mailto links", () => {
    expect(safeUrl("https://a.example/")).toBe("https://a.example/");
    expect(safeUrl("mailto:a@b.example")).toBe("mailto:a@b.example");
    expect(safeUrl("javascript:alert(1)")).toBeUndefined();
    expect(safeUrl("data:text/html,x")).toBeUndefined();
    expect(safeUrl("not a url")).toBeUndefined();
  });
});

const item = (n: number, extra: Partial<Item> = {}): Item =>
  ({
    id: `u${n}:0`,
    uuid: `u${n}`,
    type: "message:user:in",
    at: n,
    source: { offset: n, bytes: 1 },
    text: `t${n}`,
    ...extra,
  }) as Item;

describe("the timeline's rows", () => {
  it("folds a call's result into the call, and shows a result whose call is not loaded", () => {
    const use = item(1, { type: "tool:Bash", role: "use", result_item: "u2:0" } as Partial<Item>);
    const result = item(2, {
      type: "tool:Bash",
      role: "result",
      parent_item: "u1:0",
    } as Partial<Item>);
    const orphan = item(3, {
      type: "tool:Read",
      role: "result",
      parent_item: "u0:0",
    } as Partial<Item>);
    const rows = rowsOf([use, result, orphan]);
    expect(rows).toEqual([
      { kind: "item", item: use, result },
      { kind: "item", item: orphan, result: undefined },
    ]);
  });

  it("shows a sub-agent's start once, as its task with the agent's answer", () => {
    const call = item(1, { type: "tool:Agent", role: "use", result_item: "u2:0" } as Partial<Item>);
    const task = {
      ...item(1, { type: "message:sub:out", role: "use", result_item: "u2:1" } as Partial<Item>),
      id: "u1:1",
    };
    const callResult = item(2, {
      type: "tool:Agent",
      role: "result",
      parent_item: "u1:0",
    } as Partial<Item>);
    const answer = {
      ...item(2, { type: "message:sub:in", role: "result", parent_item: "u1:1" } as Partial<Item>),
      id: "u2:1",
    };
    expect(rowsOf([call, task, callResult, answer])).toEqual([
      { kind: "item", item: task, result: answer },
    ]);
  });

  it("folds each run of the harness's notes into one row, keeping the conversation and blocking hooks in sight", () => {
    const note = (n: number, type: string, extra: object = {}) =>
      item(n, { type, ...extra } as Partial<Item>);
    const items = [
      note(1, "system:attachment:skill_listing"),
      note(2, "system:attachment:deferred_tools_delta"),
      note(3, "hook:SessionStart", { outcome: "additionalContext" }),
      item(4, { type: "message:session:in" } as Partial<Item>),
      note(5, "system:attachment:date"),
      note(6, "system:caveat"),
      item(7, { type: "message:user:out" } as Partial<Item>),
      note(8, "hook:Stop", { outcome: "block" }),
      note(9, "system:unknown"),
    ];
    const shape = (list: Item[], gaps: string[] = []) =>
      foldNotes(rowsOf(list, gaps)).map((r) =>
        r.kind === "notes" ? `${r.id}×${r.rows.length}` : r.kind === "item" ? r.item.type : "gap",
      );
    expect(shape(items)).toEqual([
      "notes:u1:0×3",
      "message:session:in",
      "notes:u5:0×2",
      "message:user:out",
      "hook:Stop",
      "notes:u9:0×1",
    ]);
    // A run that grows keeps its id (and so its open state); a gap ends it.
    expect(shape([...items, note(10, "system:attachment:model")]).at(-1)).toBe("notes:u9:0×2");
    expect(shape(items.slice(0, 3), ["u1:0"])).toEqual(["notes:u1:0×1", "gap", "notes:u2:0×2"]);
  });

  it("marks a gap after the named items", () => {
    const rows = rowsOf([item(1), item(2)], ["u1:0"]);
    expect(rows.map((r) => r.kind)).toEqual(["item", "gap", "item"]);
  });

  it("joins appends, a reconnect's overlapping snapshot, and a non-overlapping one after a gap", () => {
    let state: { live: Item[]; seen: Seen } = { live: [], seen: { length: 0 } };
    const take = (list: Item[]) => {
      const next = joinLive(state, list);
      state = { live: next.live, seen: next.seen };
      return next;
    };
    take([item(1), item(2)]);
    take([item(1), item(2), item(3)]);
    expect(state.live.map((i) => i.at)).toEqual([1, 2, 3]);
    // A new subscription's snapshot: the tail from item 2 on, plus a new one.
    take([item(2), item(3), item(4)]);
    expect(state.live.map((i) => i.at)).toEqual([1, 2, 3, 4]);
    // A snapshot that starts beyond everything shown: kept, after a gap.
    const far = take([item(9), item(10)]);
    expect(far.gapAfter).toBe("u4:0");
    expect(state.live.map((i) => i.at)).toEqual([1, 2, 3, 4, 9, 10]);
  });
});

describe("a message row's status", () => {
  const out = { type: "message:session:out" };
  const receipt = (r: Partial<Receipt>): Receipt => ({
    mid: "m/1",
    to: "b",
    from: "a",
    sent_at: 1,
    state: "delivered",
    ...r,
  });

  it("says what the instance answered the send when no receipt is known", () => {
    expect(messageStatus({ ...out, delivered: true }, undefined)?.text).toBe("delivered");
    expect(messageStatus({ ...out, delivered: false, reason: "paused" }, undefined)?.text).toBe(
      "held (paused)",
    );
    expect(messageStatus(out, undefined)).toBeUndefined();
    expect(messageStatus({ type: "message:session:in" }, undefined)).toBeUndefined();
  });

  it("says what the receipt says: held and why, delivered, seen by the model at, not seen and why", () => {
    const seenAt = new Date(2026, 11, 2, 4, 12).getTime();
    expect(messageStatus(out, receipt({ state: "held", why: "paused" }))?.text).toBe(
      "held (paused)",
    );
    expect(messageStatus({ ...out, reason: "paused" }, receipt({ state: "held" }))?.text).toBe(
      "held (paused)",
    );
    expect(messageStatus(out, receipt({ state: "delivered" }))?.text).toBe("delivered");
    const seen = messageStatus(
      { type: "message:session:in" },
      receipt({ state: "read", seen_at: seenAt, read_at: seenAt + 1000, route: "socket" }),
    );
    expect(seen?.text).toMatch(/^seen by the model at .*12/);
    expect(seen?.title).toContain("by socket");
    expect(
      messageStatus(out, receipt({ state: "unseen", why: "the model answered without it" }))?.text,
    ).toBe("not seen by the model: the model answered without it");
  });
});

describe("the timeline's attention rows", () => {
  const asked = (id: number, at: number): AttentionItem => ({
    ...{ id, instance: "0123456789abcdef0123456789abcdef", sid: "s", harness: "claude" },
    ...{ kind: "permission", tool: "Bash", input: "{}", asked_at: at },
  });
  const at = (n: number) => item(n, { at: n * 1000 });

  it("places each item where it was asked, before the first row that came later", () => {
    const rows = rowsOf([at(1), at(2), at(3)]);
    const ids = withAttention(rows, [asked(8, 2500), asked(7, 500), asked(9, 9000)]).map((r) =>
      r.kind === "item" ? r.item.id : r.id,
    );
    expect(ids).toEqual(["attention:7", "u1:0", "u2:0", "attention:8", "u3:0", "attention:9"]);
  });

  it("keeps every row, in its order, whatever the items' times", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 8 }),
        fc.integer({ min: 0, max: 6 }),
        (times, n) => {
          const rows = rowsOf(Array.from({ length: n }, (_, i) => at(i + 1)));
          const out = withAttention(
            rows,
            times.map((t, i) => asked(i + 1, t)),
          );
          expect(out.filter((r) => r.kind !== "attention")).toEqual(rows);
          const placed = out.filter((r) => r.kind === "attention");
          expect(placed).toHaveLength(times.length);
          const askedAt = placed.map((r) => (r.kind === "attention" ? r.item.asked_at : 0));
          expect(askedAt).toEqual([...askedAt].sort((a, b) => a - b));
        },
      ),
    );
  });
});

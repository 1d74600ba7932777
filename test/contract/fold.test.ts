import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FIXTURE_IDS } from "../../src/contract/fixtures/index.js";
import {
  type FoldableFrame,
  foldTopicFrame,
  TOPIC_GRANULARITIES,
  topicGranularity,
  unionOf,
} from "../../src/contract/index.js";

const I1 = FIXTURE_IDS.instance;
const I2 = FIXTURE_IDS.otherInstance;
const B = FIXTURE_IDS.sidB;

function fold(frames: FoldableFrame[], start?: unknown): unknown {
  return frames.reduce<unknown>((held, f) => foldTopicFrame(held, f), start);
}

describe("granularity", () => {
  it("has the five granularities", () => {
    expect(TOPIC_GRANULARITIES).toEqual([
      "whole",
      "per_instance_whole",
      "element",
      "append",
      "event",
    ]);
  });

  it("maps the names a subscriber uses", () => {
    expect(topicGranularity(`session_status:${B}`)).toBe("whole");
    expect(topicGranularity("peers")).toBe("per_instance_whole");
    expect(topicGranularity("kv:webui")).toBe("element");
    expect(topicGranularity(`transcript_items:${B}`)).toBe("append");
    expect(topicGranularity("notify")).toBe("event");
    expect(topicGranularity("nonsense:topic")).toBeUndefined();
    expect(topicGranularity("session_status")).toBeUndefined();
    expect(topicGranularity("kv:Bad")).toBeUndefined();
  });
});

describe("foldTopicFrame", () => {
  it("whole: the frame replaces everything held", () => {
    const t = `session_status:${B}`;
    const held = fold([
      { topic: t, instance: I1, snapshot: true, data: { sid: B, todos: [1] } },
      { topic: t, instance: I1, data: { sid: B, todos: [] } },
    ]);
    expect(held).toEqual({ sid: B, todos: [] });
  });

  it("per_instance_whole: replaces only the frame's instance; absent instances stay", () => {
    const held = fold([
      {
        topic: "peers",
        instance: I1,
        snapshot: true,
        data: { peers: ["a"], last_live: [], instances: ["v1"] },
      },
      { topic: "peers", instance: I2, snapshot: true, data: { peers: ["c"], last_live: [] } },
      { topic: "peers", instance: I1, data: { peers: ["a", "b"], last_live: [] } },
    ]) as Record<string, Record<string, unknown>>;
    expect(held[I1]).toEqual({ peers: ["a", "b"], last_live: [], instances: ["v1"] });
    expect(held[I2]).toEqual({ peers: ["c"], last_live: [] });
    expect(unionOf(held, "peers")).toEqual(["a", "b", "c"]);
  });

  it("element: upserts by id, a marked element removes, a snapshot starts over", () => {
    const t = "kv:webui";
    const held = fold([
      {
        topic: t,
        instance: I1,
        snapshot: true,
        data: { entries: [{ key: "a", value: 1, updated_at: 1 }] },
      },
      { topic: t, instance: I1, data: { entries: [{ key: "b", value: 2, updated_at: 2 }] } },
      { topic: t, instance: I1, data: { entries: [{ key: "a", value: 3, updated_at: 3 }] } },
      { topic: t, instance: I1, data: { entries: [{ key: "b", updated_at: 4, deleted: true }] } },
    ]);
    expect(held).toEqual({ entries: [{ key: "a", value: 3, updated_at: 3 }] });
    const again = foldTopicFrame(held, {
      topic: t,
      instance: I1,
      snapshot: true,
      data: { entries: [] },
    });
    expect(again).toEqual({ entries: [] });
  });

  it("element with the list as data (inbox): new messages append", () => {
    const m = (n: number) => ({ mid: `${I1}/${n}` });
    expect(
      fold([
        { topic: "inbox", instance: I1, snapshot: true, data: [m(1)] },
        { topic: "inbox", instance: I1, data: [m(2), m(3)] },
      ]),
    ).toEqual([m(1), m(2), m(3)]);
  });

  it("append: lines grow, the first start is kept, end and size follow", () => {
    const t = `transcript:${B}`;
    const held = fold([
      { topic: t, instance: I1, snapshot: true, data: { sid: B, size: 10 } },
      { topic: t, instance: I1, data: { sid: B, lines: ["x"], start: 10, end: 12, size: 12 } },
      { topic: t, instance: I1, data: { sid: B, lines: ["y", "z"], start: 12, end: 16, size: 16 } },
    ]);
    expect(held).toEqual({ sid: B, lines: ["x", "y", "z"], start: 10, end: 16, size: 16 });
  });

  it("event: nothing is held", () => {
    expect(
      foldTopicFrame(
        { anything: 1 },
        { topic: "notify", instance: I1, data: { sid: B, sid_label: "b", text: "t", sent_at: 1 } },
      ),
    ).toBeUndefined();
  });

  it("refuses a name this generation does not define", () => {
    expect(() => foldTopicFrame(undefined, { topic: "nope", instance: I1, data: 1 })).toThrow(
      TypeError,
    );
  });

  it("never mutates what it was given", () => {
    const held = Object.freeze({
      entries: Object.freeze([Object.freeze({ key: "a", value: 1, updated_at: 1 })]),
    });
    expect(() =>
      foldTopicFrame(held, {
        topic: "kv:n",
        instance: I1,
        data: { entries: [{ key: "b", value: 2, updated_at: 2 }] },
      }),
    ).not.toThrow();
  });
});

describe("folding is order-correct (property)", () => {
  const value = fc.integer();

  it("whole: the result is the last frame", () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1 }), (values) => {
        const frames = values.map((v) => ({ topic: `session_status:${B}`, instance: I1, data: v }));
        expect(fold(frames)).toBe(values.at(-1));
      }),
    );
  });

  it("per_instance_whole: each instance holds its own last frame, however they interleave", () => {
    const frame = fc.record({ instance: fc.constantFrom(I1, I2, "0".repeat(32)), v: value });
    fc.assert(
      fc.property(fc.array(frame), (frames) => {
        const held = fold(
          frames.map((f) => ({ topic: "agents", instance: f.instance, data: f.v })),
        );
        const expected: Record<string, number> = {};
        for (const f of frames) expected[f.instance] = f.v;
        expect(held ?? {}).toEqual(expected);
      }),
    );
  });

  it("element: equals applying upserts and removals in order to a map", () => {
    const op = fc.record({ key: fc.constantFrom("a", "b", "c", "d"), v: value, del: fc.boolean() });
    fc.assert(
      fc.property(fc.array(fc.array(op, { maxLength: 4 })), (batches) => {
        const model = new Map<string, number>();
        const frames = batches.map((batch) => {
          for (const o of batch) {
            if (o.del) model.delete(o.key);
            else model.set(o.key, o.v);
          }
          const entries = batch.map((o) =>
            o.del
              ? { key: o.key, updated_at: 1, deleted: true }
              : { key: o.key, value: o.v, updated_at: 1 },
          );
          return { topic: "kv:ns", instance: I1, data: { entries } };
        });
        const held =
          (fold(frames) as { entries: { key: string; value: number }[] } | undefined)?.entries ??
          [];
        expect(new Map(held.map((e) => [e.key, e.value]))).toEqual(model);
      }),
    );
  });

  it("append: the held list is the concatenation in order", () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.string(), { maxLength: 3 })), (chunks) => {
        const t = `transcript_items:${B}`;
        const frames: FoldableFrame[] = [
          { topic: t, instance: I1, snapshot: true, data: { sid: B, items: [] } },
        ];
        for (const items of chunks)
          frames.push({ topic: t, instance: I1, data: { sid: B, items } });
        expect((fold(frames) as { items: string[] }).items).toEqual(chunks.flat());
      }),
    );
  });
});

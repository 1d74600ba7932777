import { TOPIC_ATTRIBUTES, type TopicAttributes, topicKind } from "./topic-kinds.js";

/** The part of a topic frame folding reads. */
export interface FoldableFrame {
  readonly topic: string;
  readonly instance: string;
  readonly snapshot?: true;
  readonly data: unknown;
}

/** What a subscriber holds for a `per_instance_whole` topic: each instance's
 * latest value, keyed by instance id. The held value is their union. */
export type PerInstance<T = unknown> = Record<string, T>;

type Obj = Record<string, unknown>;

/**
 * Fold one frame into what a subscriber holds for its topic — the one fold
 * function for every granularity, read from the topic table, used by the
 * instance's tests and the web console alike.
 *
 * - `whole`: the frame replaces everything.
 * - `per_instance_whole`: the frame replaces its instance's value only
 *   (members listed in `keepWhenAbsent` keep their held value when absent).
 * - `element`: upsert by id, a marked element removes; a snapshot replaces.
 * - `append`: the list grows; a snapshot starts over.
 * - `event`: nothing is held; the result is always `undefined`.
 *
 * Pure: the held value is never mutated, a new one is returned.
 */
export function foldTopicFrame(held: unknown, frame: FoldableFrame): unknown {
  const kind = topicKind(frame.topic);
  if (kind === undefined) throw new TypeError(`not a topic of this generation: ${frame.topic}`);
  const attrs: TopicAttributes = TOPIC_ATTRIBUTES[kind];
  switch (attrs.granularity) {
    case "whole":
      return frame.data;
    case "per_instance_whole":
      return foldPerInstance(held as PerInstance | undefined, frame, attrs);
    case "element":
      return frame.snapshot
        ? foldElements(undefined, frame.data, attrs)
        : foldElements(held, frame.data, attrs);
    case "append":
      return frame.snapshot || held === undefined
        ? frame.data
        : foldAppend(held as Obj, frame.data as Obj, attrs);
    case "event":
      return undefined;
  }
}

function foldPerInstance(
  held: PerInstance | undefined,
  frame: FoldableFrame,
  attrs: TopicAttributes,
): PerInstance {
  let value = frame.data;
  const previous = held?.[frame.instance];
  if (attrs.keepWhenAbsent && isObj(value) && isObj(previous)) {
    const kept: Obj = { ...value };
    for (const member of attrs.keepWhenAbsent) {
      if (!(member in kept) && member in previous) kept[member] = previous[member];
    }
    value = kept;
  }
  return { ...held, [frame.instance]: value };
}

function foldElements(held: unknown, data: unknown, attrs: TopicAttributes): unknown {
  const shape = attrs.elements!;
  const heldList = held === undefined ? [] : listOf(held, shape.list);
  const incoming = listOf(data, shape.list);
  const byId = new Map<unknown, unknown>();
  for (const el of heldList) byId.set((el as Obj)[shape.id], el);
  for (const el of incoming) {
    const id = (el as Obj)[shape.id];
    // Re-inserting keeps first-seen order for known ids and appends new ones.
    if (shape.removal !== undefined && (el as Obj)[shape.removal] === true) byId.delete(id);
    else byId.set(id, el);
  }
  const list = [...byId.values()];
  if (shape.list === undefined) return list;
  return { ...(held as Obj | undefined), ...(data as Obj), [shape.list]: list };
}

function foldAppend(held: Obj, data: Obj, attrs: TopicAttributes): Obj {
  const shape = attrs.append!;
  const out: Obj = { ...held, ...data };
  for (const member of shape.keepFirst ?? []) {
    if (member in held) out[member] = held[member];
  }
  const before = Array.isArray(held[shape.list]) ? (held[shape.list] as unknown[]) : [];
  const added = Array.isArray(data[shape.list]) ? (data[shape.list] as unknown[]) : [];
  out[shape.list] = before.concat(added);
  return out;
}

function listOf(value: unknown, member: string | undefined): unknown[] {
  const list = member === undefined ? value : (value as Obj | undefined)?.[member];
  return Array.isArray(list) ? list : [];
}

function isObj(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The union of a `per_instance_whole` value's lists, e.g. every instance's
 * `peers` rows: what a view shows after folding. */
export function unionOf<T>(held: PerInstance | undefined, member: string): T[] {
  const out: T[] = [];
  for (const value of Object.values(held ?? {})) {
    const list = isObj(value) ? value[member] : value;
    if (Array.isArray(list)) out.push(...(list as T[]));
  }
  return out;
}

import { batch, type ReadonlySignal, type Signal, signal } from "@preact/signals";
import { useEffect, useMemo } from "preact/hooks";
import { foldTopicFrame } from "../../../src/contract/fold.js";
import { TOPIC_ATTRIBUTES, type TopicAttributes, topicKind } from "../../../src/contract/topics.js";
import type { TopicFrame, Wire, WireError } from "./wire.js";

/**
 * What the console holds for each topic it listens to: the value folded from
 * every frame with the contract's own `foldTopicFrame` (the instance and the
 * console fold alike), and whether it is current.
 *
 * A value is *stale* from the moment the connection drops until the new
 * subscription's snapshot arrives: views keep showing it, marked, instead of
 * emptying the screen. The first frame after a (re)subscription folds onto
 * nothing, so what the instance forgot while the console was away (a lost
 * session removed, an instance gone) does not linger.
 */
export interface TopicState<T = unknown> {
  readonly value: ReadonlySignal<T | undefined>;
  /** True while the connection is down or the snapshot has not come yet. */
  readonly stale: ReadonlySignal<boolean>;
  /** Increments on every frame (for views that react to any change). */
  readonly frames: ReadonlySignal<number>;
  /** Why the instance refused the subscription (a contract code and its
   * message), until a frame arrives. */
  readonly error: ReadonlySignal<WireError | undefined>;
}

interface Held {
  value: Signal<unknown>;
  stale: Signal<boolean>;
  frames: Signal<number>;
  error: Signal<WireError | undefined>;
  users: number;
  /** The next frame starts over (a subscription was just made). */
  fresh: boolean;
  keepLast?: number;
  stop?: () => void;
  linger?: ReturnType<typeof setTimeout>;
}

/** A topic nobody shows is kept this long before it is unsubscribed, so
 * moving between views does not churn subscriptions. */
const LINGER_MS = 15_000;

export class Topics {
  private readonly held = new Map<string, Held>();

  constructor(private readonly wire: Wire) {
    // Mark everything stale when the connection drops; the next greeting
    // subscribes again (wire.ts) and the snapshot clears the mark.
    wire.state.subscribe((state) => {
      if (state === "open") {
        for (const h of this.held.values()) h.fresh = true;
        return;
      }
      for (const h of this.held.values()) h.stale.value = true;
    });
  }

  /** Hold a topic (subscribing when first held); `release` lets it go. */
  /** `keepLast`: for an `append` topic, hold at most this many of its
   * list's newest elements (a transcript that streams for hours must not
   * grow the page without bound); the fold itself is the contract's. */
  hold<T>(topic: string, keepLast?: number): { state: TopicState<T>; release(): void } {
    let h = this.held.get(topic);
    if (h === undefined) {
      const made: Held = {
        value: signal(undefined),
        stale: signal(true),
        frames: signal(0),
        error: signal(undefined),
        users: 0,
        fresh: true,
        keepLast,
      };
      made.stop = this.wire.listen(
        topic,
        (frame) => this.fold(made, frame),
        (error) => {
          made.error.value = error;
        },
      );
      this.held.set(topic, made);
      h = made;
    }
    clearTimeout(h.linger);
    h.users++;
    const held = h;
    let released = false;
    return {
      state: held as unknown as TopicState<T>,
      release: () => {
        if (released) return;
        released = true;
        if (--held.users > 0) return;
        held.linger = setTimeout(() => {
          if (held.users > 0) return;
          held.stop?.();
          this.held.delete(topic);
        }, LINGER_MS);
      },
    };
  }

  private fold(h: Held, frame: TopicFrame): void {
    const start = h.fresh;
    h.fresh = false;
    const next = trim(foldTopicFrame(start ? undefined : h.value.peek(), frame), frame, h.keepLast);
    batch(() => {
      if (next !== undefined) h.value.value = next;
      h.stale.value = false;
      h.error.value = undefined;
      h.frames.value++;
    });
  }
}

function trim(value: unknown, frame: TopicFrame, keepLast: number | undefined): unknown {
  if (keepLast === undefined || typeof value !== "object" || value === null) return value;
  const kind = topicKind(frame.topic);
  const list =
    kind === undefined ? undefined : (TOPIC_ATTRIBUTES[kind] as TopicAttributes).append?.list;
  const held = list === undefined ? undefined : (value as Record<string, unknown>)[list];
  if (!Array.isArray(held) || held.length <= keepLast) return value;
  return { ...value, [list!]: held.slice(held.length - keepLast) };
}

/** The held state of a topic for as long as the component shows it;
 * `undefined` topic = none. The hold is taken while rendering (so the first
 * paint already shows what is held) and released when the component goes or
 * the topic changes. */
export function useTopic<T>(topics: Topics, topic: string | undefined): TopicState<T> | undefined {
  const hold = useMemo(
    () => (topic === undefined ? undefined : topics.hold<T>(topic)),
    [topics, topic],
  );
  useEffect(() => () => hold?.release(), [hold]);
  return hold?.state;
}

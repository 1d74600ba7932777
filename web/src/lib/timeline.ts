import { computed, effect, type ReadonlySignal, signal } from "@preact/signals";
import type { TranscriptItem } from "../../../src/contract/transcripts.js";
import { topics, wire } from "../app-state.js";
import type { TopicState } from "../conn/topics.js";
import { WireError } from "../conn/wire.js";

/** An item as the timeline reads it: the fields every item has (contract
 * §10.3–10.4) and whatever its type adds. */
export type Item = TranscriptItem & {
  id: string;
  type: string;
  at: number;
  role?: "use" | "result";
  result_item?: string;
  parent_item?: string;
};

/** What the timeline shows, oldest first: an item, with its result folded in
 * when it is a call whose result is loaded; or the marker of a gap that was
 * not loaded. */
export type Row =
  | { kind: "item"; item: Item; result?: Item }
  | { kind: "gap"; id: string; after: string };

/** Pages of the history read from the transcript's beginning. */
const PAGE = 1000;
/** How much history is read without being asked; beyond it a gap marker
 * offers the rest. */
const AUTO_PAGES = 20;

/**
 * One session's timeline: the `transcript_items:<sid>` topic (its snapshot is
 * the tail, then every new item, folded by `foldTopicFrame`) joined with the
 * history before that tail, read page by page from the beginning with
 * `transcript_items_read` (contract §4.3.3: this generation reads forward
 * only). What was shown stays shown across a reconnect: the new snapshot is
 * joined where it overlaps, and where it does not (or where the history read
 * so far does not reach the tail) a gap marker says so and can load on.
 */
export class Timeline {
  private readonly hold: { state: TopicState<{ sid: string; items: Item[] }>; release(): void };
  readonly topic: TopicState<{ sid: string; items: Item[] }>;
  /** Items read from the beginning, oldest first. */
  private readonly history = signal<Item[]>([]);
  /** Items from the topic, oldest first, kept across snapshots. */
  private readonly live = signal<Item[]>([]);
  /** A reconnect's snapshot that did not overlap: the live item before it. */
  readonly liveGap = signal<string | undefined>(undefined);
  /** The topic's list as last seen: its first id and length. */
  private seen: { first?: string; length: number; list?: Item[] } = { length: 0 };
  /** Where the next history page starts (`since_id`), "start" before the
   * first, "end" once the transcript's end was reached. */
  private cursor = "start";
  private readonly reached = signal(false);
  readonly loading = signal(false);
  readonly historyError = signal<string | undefined>(undefined);
  private pagesRead = 0;
  private readonly stops: (() => void)[] = [];

  readonly rows: ReadonlySignal<Row[]>;
  readonly count: ReadonlySignal<number>;

  constructor(readonly sid: string) {
    this.hold = topics.hold(`transcript_items:${sid}`);
    this.topic = this.hold.state;
    this.rows = computed(() => {
      const live = this.live.value;
      const liveIds = new Set(live.map((i) => i.id));
      const before = this.history.value.filter((i) => !liveIds.has(i.id));
      const gap =
        !this.reached.value && before.length > 0 ? before[before.length - 1]!.id : undefined;
      return rowsOf(before.concat(live), [gap, this.liveGap.value]);
    });
    this.count = computed(() => this.rows.value.length);
    this.stops.push(effect(() => this.absorb(this.topic.value.value?.items)));
    // Read history once the tail is known (and again after a reconnect).
    this.stops.push(
      effect(() => {
        if (this.topic.value.value === undefined || wire.state.value !== "open") return;
        void this.fill(false);
      }),
    );
  }

  dispose(): void {
    for (const stop of this.stops) stop();
    this.hold.release();
  }

  /** Take the topic's list into `live`: an append adds its new items; a new
   * snapshot joins where it overlaps what is shown, or after a gap. */
  private absorb(list: Item[] | undefined): void {
    if (list === undefined || list === this.seen.list) return;
    const seen = this.seen;
    this.seen = { first: list[0]?.id, length: list.length, list };
    const live = this.live.peek();
    if (seen.list !== undefined && list[0]?.id === seen.first && list.length >= seen.length) {
      if (list.length > seen.length) this.live.value = live.concat(list.slice(seen.length));
      return;
    }
    if (live.length === 0 || list.length === 0) {
      if (list.length > 0) this.live.value = list.slice();
      return;
    }
    const at = live.findIndex((i) => i.id === list[0]!.id);
    if (at >= 0) {
      this.live.value = live.slice(0, at).concat(list);
      return;
    }
    this.liveGap.value = live[live.length - 1]!.id;
    this.live.value = live.concat(list);
  }

  /** Read pages until the history meets what the topic showed (or, unless
   * `more`, until AUTO_PAGES were read in all). */
  async fill(more: boolean): Promise<void> {
    if (this.loading.peek() || this.reached.peek() || this.cursor === "end") return;
    this.loading.value = true;
    this.historyError.value = undefined;
    try {
      let budget = more ? AUTO_PAGES : AUTO_PAGES - this.pagesRead;
      while (budget-- > 0 && this.cursor !== "end") {
        const liveIds = new Set(this.live.peek().map((i) => i.id));
        const page = await wire.request("transcript_items_read", {
          sid: this.sid,
          limit: PAGE,
          ...(this.cursor === "start" ? {} : { since_id: this.cursor }),
        });
        this.pagesRead++;
        const items = page.items as Item[];
        const met = items.findIndex((i) => liveIds.has(i.id));
        this.history.value = this.history.peek().concat(met < 0 ? items : items.slice(0, met));
        this.cursor = page.next ?? "end";
        if (met >= 0 || this.cursor === "end") {
          this.reached.value = true;
          break;
        }
      }
    } catch (error) {
      this.historyError.value =
        error instanceof WireError ? `${error.code}: ${error.message}` : String(error);
    } finally {
      this.loading.value = false;
    }
  }
}

/** Calls folded with their results: a result whose call is loaded is shown
 * inside the call, not on its own. */
export function rowsOf(items: Item[], gapsAfter: (string | undefined)[] = []): Row[] {
  const byId = new Map<string, Item>();
  for (const i of items) byId.set(i.id, i);
  const rows: Row[] = [];
  for (const item of items) {
    if (item.role === "result" && item.parent_item !== undefined && byId.has(item.parent_item))
      continue;
    const result =
      item.role === "use" && item.result_item !== undefined
        ? byId.get(item.result_item)
        : undefined;
    rows.push({ kind: "item", item, result });
    if (gapsAfter.includes(item.id))
      rows.push({ kind: "gap", id: `gap:${item.id}`, after: item.id });
  }
  return rows;
}

import { computed, effect, type ReadonlySignal, signal } from "@preact/signals";
import { DEFAULT_SELECTION_EXCLUDES } from "../../../src/contract/transcript-select.js";
import { topics, wire } from "../app-state.js";
import type { TopicState } from "../conn/topics.js";
import { WireError } from "../conn/wire.js";
import { foldNotes, type Item, joinLive, type Row, rowsOf, type Seen } from "./timeline-rows.js";

export type { Item, ItemRow, Row } from "./timeline-rows.js";

/** Pages of the history read from the transcript's beginning. */
const PAGE = 1000;
/** How much history is read without being asked; beyond it a gap marker
 * offers the rest. */
const AUTO_PAGES = 20;
/** Every item type, attachments included: the topic's tail carries them, so
 * the history must too, or the harness's notes would be there only lately.
 * The default selection (what a read without `types` gets) is everything but
 * attachments; a first selector that removes starts from it (§10.6), and the
 * second adds them back. */
const EVERY_TYPE = [`-${DEFAULT_SELECTION_EXCLUDES}`, DEFAULT_SELECTION_EXCLUDES];
/** The most items a timeline keeps (~0.3 KB each): past it the oldest are
 * let go and a marker at the top says so, so a session that streams for
 * hours does not grow the page. */
export const MAX_KEPT = 20_000;

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
  private seen: Seen = { length: 0 };
  /** Where the next history page starts (`since_id`), "start" before the
   * first, "end" once the transcript's end was reached. */
  private cursor = "start";
  private readonly reached = signal(false);
  readonly loading = signal(false);
  /** How many of the oldest items were let go (MAX_KEPT). */
  readonly dropped = signal(0);
  readonly historyError = signal<string | undefined>(undefined);
  private pagesRead = 0;
  private readonly stops: (() => void)[] = [];

  readonly rows: ReadonlySignal<Row[]>;
  /** Items loaded (a call and its result are two, shown as one row). */
  readonly count: ReadonlySignal<number>;

  constructor(readonly sid: string) {
    this.hold = topics.hold(`transcript_items:${sid}`, MAX_KEPT);
    this.topic = this.hold.state;
    const items = computed(() => {
      const live = this.live.value;
      const liveIds = new Set(live.map((i) => i.id));
      const before = this.history.value.filter((i) => !liveIds.has(i.id));
      const gap =
        !this.reached.value && before.length > 0 ? before[before.length - 1]!.id : undefined;
      return { list: before.concat(live), gap };
    });
    this.rows = computed(() => {
      const rows = foldNotes(rowsOf(items.value.list, [items.value.gap, this.liveGap.value]));
      return this.dropped.value > 0
        ? [{ kind: "gap", id: "gap:dropped", after: "" } as Row, ...rows]
        : rows;
    });
    this.count = computed(() => items.value.list.length);
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

  /** Take the topic's list into `live` (timeline-rows.ts `joinLive`). */
  private absorb(list: Item[] | undefined): void {
    if (list === undefined) return;
    const next = joinLive({ live: this.live.peek(), seen: this.seen }, list);
    this.seen = next.seen;
    if (next.live !== this.live.peek()) this.live.value = next.live;
    if (next.gapAfter !== undefined) this.liveGap.value = next.gapAfter;
    this.keepWithinBound();
  }

  /** Let the oldest items go past MAX_KEPT: history first, then live. */
  private keepWithinBound(): void {
    const history = this.history.peek();
    const live = this.live.peek();
    let over = history.length + live.length - MAX_KEPT;
    if (over <= 0) return;
    this.dropped.value += over;
    const fromHistory = Math.min(over, history.length);
    if (fromHistory > 0) this.history.value = history.slice(fromHistory);
    over -= fromHistory;
    if (over > 0) this.live.value = live.slice(over);
  }

  /** Read pages until the history meets what the topic showed (or, unless
   * `more`, until AUTO_PAGES were read in all). */
  async fill(more: boolean): Promise<void> {
    if (this.loading.peek() || this.reached.peek() || this.cursor === "end") return;
    if (!more && this.pagesRead >= AUTO_PAGES) return;
    this.loading.value = true;
    this.historyError.value = undefined;
    try {
      let budget = more ? AUTO_PAGES : AUTO_PAGES - this.pagesRead;
      while (budget-- > 0 && this.cursor !== "end") {
        const liveIds = new Set(this.live.peek().map((i) => i.id));
        const page = await wire.request("transcript_items_read", {
          sid: this.sid,
          limit: PAGE,
          types: EVERY_TYPE,
          ...(this.cursor === "start" ? {} : { since_id: this.cursor }),
        });
        this.pagesRead++;
        const items = page.items as Item[];
        const met = items.findIndex((i) => liveIds.has(i.id));
        this.history.value = this.history.peek().concat(met < 0 ? items : items.slice(0, met));
        this.keepWithinBound();
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

import { contractError } from "../../contract/errors.js";
import { topicDataBudget } from "../../contract/frames.js";
import type { DumpIds, TranscriptItem } from "../../contract/transcripts.js";
import type { CallBook, Classified } from "../../harness/item-builder.js";
import { keyOf } from "../../harness/tool-pairs.js";
import {
  type ClassifierState,
  classifierFor,
  finishItems,
  type ItemLinks,
  type TranscriptClassifier,
} from "../../harness/transcript-classifier.js";
import { readLines, type TranscriptLine } from "../../harness/transcript-lines.js";
import type { TopicHub } from "../topic-hub.js";
import type { FeedConsumer, FeedInfo } from "./feeds.js";
import { itemBytes, wireItem } from "./item-fit.js";
import { Ledger } from "./ledger.js";
import { joinSent, type SentRecords } from "./sent-join.js";

// The typed item index of one transcript (contract §10, §5.4
// `transcript_items:<sid>`; DR-0027). Memory stays flat however long the file
// grows: items are never kept. What is kept is what it takes to produce any
// stretch of them again, identically:
//
// * per record that gave items: its offset, length, uuid and instant;
// * every few hundred records, the classifier's state before the next line
//   (a checkpoint) — a read re-classifies from the checkpoint before where it
//   starts, so turns, streamed-message dedup and ids come out as in the first
//   pass;
// * per call: its tool, where it was made, and which items are its use and
//   first result — the links, computed over the whole file;
// * the newest items, for the topic's snapshot.

/** Items the `transcript_items:<sid>` snapshot carries at most. */
export const RECENT_ITEMS = 100;
/** Records between classifier checkpoints: the most a read re-classifies
 * before the record it starts at. */
const CHECKPOINT_EVERY = 256;
/** Items of a record longer than this are fitted before they are kept in the
 * recent ring (smaller records cannot hold anything large). */
const RING_FIT_ABOVE = 64 * 1024;
/** `<record>·<index>` packed in one number: index below this. */
const PACK = 65536;

/** A growable array of doubles (offsets and instants exceed 32 bits). */
class Numbers {
  private data = new Float64Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = v;
  }
  at(i: number): number {
    return this.data[i]!;
  }
  set(i: number, v: number): void {
    this.data[i] = v;
  }
}

interface Checkpoint {
  /** The line the state was saved before. */
  offset: number;
  /** The record number that line (or the next one giving items) gets. */
  record: number;
  state: ClassifierState;
}

/** Where a typed read starts and stops. */
export interface ItemRange {
  sinceId?: string;
  sinceUuid?: string;
  sinceAt?: number;
  untilUuid?: string;
  untilAt?: number;
}

export class ItemIndex implements FeedConsumer, CallBook, ItemLinks {
  private classifier!: TranscriptClassifier;
  private generation = 0;
  // Per record.
  private offsets = new Numbers();
  private sizes = new Numbers();
  private ats = new Numbers();
  private uuids: string[] = [];
  private checkpoints: Checkpoint[] = [];
  // Per call (slot), by tool_use_id.
  private slots = new Map<string, number>();
  private slotTool: number[] = [];
  private slotOffset = new Numbers();
  private links: Numbers[] = [];
  private tools: string[] = [];
  private toolIds = new Map<string, number>();
  private recent: TranscriptItem[] = [];
  private readonly topic: string | undefined;
  private readonly budget: number;

  /** `fromStart`: a subscriber was told the transcript was empty before the
   * file existed, so the catch-up is published too. */
  constructor(
    readonly info: FeedInfo,
    private readonly hub?: TopicHub,
    instanceId = "",
    private readonly fromStart = false,
    /** The instance's record of what it carried, for the mids of sends. */
    private readonly sent?: SentRecords,
  ) {
    // Only a session's own transcript has a topic; an agent's is read only.
    this.topic = info.agentId === undefined ? `transcript_items:${info.sid}` : undefined;
    this.budget =
      this.topic === undefined ? 0 : topicDataBudget(this.topic, instanceId) - 64 - info.sid.length;
    this.reset();
  }

  /** Lines that were not JSON objects (torn, foreign, oversized). */
  get parseErrors(): number {
    return this.classifier.parseErrors;
  }

  /** Records that gave items so far. */
  get records(): number {
    return this.uuids.length;
  }

  reset(): void {
    this.generation++;
    this.classifier = classifierFor(this.info.harness, this, subjectOf(this.info));
    this.offsets = new Numbers();
    this.sizes = new Numbers();
    this.ats = new Numbers();
    this.uuids = [];
    this.checkpoints = [{ offset: 0, record: 0, state: this.classifier.save() }];
    this.slots = new Map();
    this.slotTool = [];
    this.slotOffset = new Numbers();
    this.links = [new Numbers(), new Numbers(), new Numbers(), new Numbers()];
    this.recent = [];
  }

  lines(batch: readonly TranscriptLine[], caughtUp: boolean): void {
    const publish =
      this.topic !== undefined &&
      (caughtUp || this.fromStart) &&
      this.hub !== undefined &&
      this.hub.count(this.topic) > 0;
    const fresh: TranscriptItem[] = [];
    for (const line of batch) {
      const last = this.checkpoints.at(-1)!;
      if (this.records - last.record >= CHECKPOINT_EVERY)
        this.checkpoints.push({
          offset: line.offset,
          record: this.records,
          state: this.classifier.save(),
        });
      const classified = this.classifier.classify(line);
      if (classified.length === 0) continue;
      const record = this.records;
      this.offsets.push(line.offset);
      this.sizes.push(line.bytes);
      this.ats.push(classified[0]!.item.at);
      this.uuids.push(classified[0]!.item.uuid);
      this.note(classified, record, line.offset);
      const items = this.finish(classified, line.record);
      for (const item of items) {
        const kept = line.bytes > RING_FIT_ABOVE ? wireItem(item) : item;
        this.remember(kept);
        if (publish) fresh.push(kept);
      }
    }
    if (fresh.length > 0) this.publish(fresh);
  }

  /** The finished items of one record, sends joined to what was carried. */
  private finish(classified: readonly Classified[], record: Record<string, unknown> | undefined) {
    const items = finishItems(classified, record, this);
    return this.sent === undefined
      ? items
      : items.map((item) => joinSent(item, this.info.sid, this.sent));
  }

  /** Take in the pairs of one record: a use opens its call's slot, a result
   * is linked only to a call seen before it (so a re-read agrees). */
  private note(classified: readonly Classified[], record: number, offset: number): void {
    classified.forEach(({ item, pair }) => {
      if (pair === undefined) return;
      const index = Number(item.id.slice(item.id.lastIndexOf(":") + 1));
      const { toolUseId, sub } = keyOf(pair.key);
      const tool = !sub;
      const links = this.links[(tool ? 0 : 2) + (pair.side === "use" ? 0 : 1)]!;
      let slot = this.slots.get(toolUseId);
      if (pair.side === "use") {
        if (slot === undefined) {
          slot = this.slotTool.length;
          this.slots.set(toolUseId, slot);
          this.slotTool.push(-1);
          this.slotOffset.push(offset);
          for (const l of this.links) l.push(-1);
        }
        if (links.at(slot) >= 0) return;
        links.set(slot, record * PACK + index);
        if (tool) this.slotTool[slot] = this.toolId(item.type.slice(5));
      } else if (slot !== undefined) {
        const uses = this.links[tool ? 0 : 2]!;
        if (uses.at(slot) >= 0 && links.at(slot) < 0) links.set(slot, record * PACK + index);
      }
    });
  }

  private toolId(name: string): number {
    let id = this.toolIds.get(name);
    if (id === undefined) {
      id = this.tools.length;
      this.tools.push(name);
      this.toolIds.set(name, id);
    }
    return id;
  }

  toolOf(toolUseId: string, offset: number): string | undefined {
    const slot = this.slots.get(toolUseId);
    if (slot === undefined || this.slotOffset.at(slot) >= offset) return undefined;
    return this.tools[this.slotTool[slot]!];
  }

  useOf(key: string): string | undefined {
    return this.link(key, 0);
  }

  resultOf(key: string): string | undefined {
    return this.link(key, 1);
  }

  private link(key: string, side: 0 | 1): string | undefined {
    const { toolUseId, sub } = keyOf(key);
    const slot = this.slots.get(toolUseId);
    if (slot === undefined) return undefined;
    const packed = this.links[(sub ? 2 : 0) + side]!.at(slot);
    if (packed < 0) return undefined;
    const record = Math.floor(packed / PACK);
    return `${this.uuids[record]}:${packed - record * PACK}`;
  }

  /** Keep the newest items; a result seen now completes its call if the
   * call is still among them. */
  private remember(item: TranscriptItem): void {
    const parent = (item as { parent_item?: string }).parent_item;
    if (parent !== undefined) {
      for (let i = this.recent.length - 1; i >= 0; i--) {
        const call = this.recent[i]!;
        if (call.id === parent) {
          this.recent[i] = { ...call, result_item: item.id } as TranscriptItem;
          break;
        }
      }
    }
    this.recent.push(item);
    if (this.recent.length > RECENT_ITEMS * 2) this.recent = this.recent.slice(-RECENT_ITEMS);
  }

  /** The topic's snapshot: the newest items, fitted for the wire. */
  snapshot(): TranscriptItem[] {
    return this.recent.slice(-RECENT_ITEMS).map(wireItem);
  }

  private publish(items: TranscriptItem[]): void {
    const sid = this.info.sid;
    let frame: TranscriptItem[] = [];
    let bytes = 0;
    for (const item of items) {
      const wire = wireItem(item);
      const size = itemBytes(wire);
      if (frame.length > 0 && bytes + size > this.budget) {
        this.hub!.publish(this.topic!, { sid, items: frame });
        frame = [];
        bytes = 0;
      }
      frame.push(wire);
      bytes += size;
    }
    if (frame.length > 0) this.hub!.publish(this.topic!, { sid, items: frame });
  }

  // --- reading items again ---

  /** The record a uuid names, or -1. `@<offset>` names are found by offset. */
  private recordOf(uuid: string): number {
    if (uuid.startsWith("@")) {
      const offset = Number(uuid.slice(1));
      let lo = 0;
      let hi = this.records - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const at = this.offsets.at(mid);
        if (at === offset) return this.uuids[mid] === uuid ? mid : -1;
        if (at < offset) lo = mid + 1;
        else hi = mid - 1;
      }
      return -1;
    }
    return this.uuids.indexOf(uuid);
  }

  /**
   * The items of `range`, oldest first, in batches, re-read from the file and
   * linked over the whole transcript; `keeps` filters by type. Covers the
   * records indexed when it starts. `not_found` for a since/until uuid or id
   * this transcript does not hold.
   */
  async *items(
    range: ItemRange,
    keeps: (type: string) => boolean,
  ): AsyncGenerator<TranscriptItem[]> {
    const generation = this.generation;
    const end = this.records;
    let first = 0;
    let firstIndex = 0;
    if (range.sinceId !== undefined) {
      const colon = range.sinceId.lastIndexOf(":");
      first = this.recordOf(range.sinceId.slice(0, colon));
      firstIndex = Number(range.sinceId.slice(colon + 1));
      if (first < 0)
        throw contractError("not_found", `no item ${range.sinceId} in this transcript`);
    } else if (range.sinceUuid !== undefined) {
      first = this.recordOf(range.sinceUuid);
      if (first < 0)
        throw contractError("not_found", `no record ${range.sinceUuid} in this transcript`);
    } else if (range.sinceAt !== undefined) {
      while (first < end && this.ats.at(first) < range.sinceAt) first++;
    }
    let last = end - 1;
    if (range.untilUuid !== undefined) {
      last = this.recordOf(range.untilUuid);
      if (last < 0)
        throw contractError("not_found", `no record ${range.untilUuid} in this transcript`);
    }
    if (first > last) return;
    const checkpoint = this.checkpointBefore(first);
    const classifier = classifierFor(this.info.harness, this, subjectOf(this.info));
    classifier.restore(checkpoint.state);
    let record = checkpoint.record;
    const until = this.offsets.at(last) + this.sizes.at(last);
    for await (const batch of readLines(this.info.path, checkpoint.offset, { until })) {
      if (this.generation !== generation)
        throw contractError(
          "internal_error",
          "the transcript was replaced while it was read; read again",
        );
      const out: TranscriptItem[] = [];
      for (const line of batch) {
        const classified = classifier.classify(line);
        if (classified.length === 0) continue;
        const r = record++;
        if (this.offsets.at(r) !== line.offset)
          throw contractError(
            "internal_error",
            "the transcript changed while it was read; read again",
          );
        if (r < first) continue;
        if (range.untilAt !== undefined && this.ats.at(r) > range.untilAt) {
          if (out.length > 0) yield out;
          return;
        }
        const items = this.finish(classified, line.record);
        for (const item of items) {
          if (r === first && indexOf(item.id) < firstIndex) continue;
          if (keeps(item.type)) out.push(item);
        }
      }
      if (out.length > 0) yield out;
    }
  }

  private checkpointBefore(record: number): Checkpoint {
    let lo = 0;
    let hi = this.checkpoints.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.checkpoints[mid]!.record <= record) lo = mid;
      else hi = mid - 1;
    }
    return this.checkpoints[lo]!;
  }
}

function indexOf(id: string): number {
  return Number(id.slice(id.lastIndexOf(":") + 1));
}

function subjectOf(info: FeedInfo) {
  return info.agentId === undefined ? {} : { agentId: info.agentId };
}

/** One typed read's answer (contract §4.3.3 `transcript_items_read`). */
export interface ItemSlice {
  items: TranscriptItem[];
  next?: string;
  ids: DumpIds;
}

/**
 * At most `limit` items of `range` that `keeps` selects, fitted for the wire,
 * within `budget` serialised bytes (items and ledger together): the first
 * item left out is `next`. The read stops there, so a slice of a long
 * transcript costs what it returns plus at most a checkpoint's worth.
 */
export async function readSlice(
  index: ItemIndex,
  range: ItemRange,
  keeps: (type: string) => boolean,
  limit: number,
  budget: number,
): Promise<ItemSlice> {
  const items: TranscriptItem[] = [];
  const ledger = new Ledger(index.info);
  let bytes = 0;
  let next: string | undefined;
  outer: for await (const batch of index.items(range, keeps)) {
    for (const item of batch) {
      const wire = wireItem(item);
      const size = itemBytes(wire);
      // The ledger grows with the items; keep room for it. The first item is
      // always taken (fitted, it is far below a frame), so `next` moves on.
      const full = items.length > 0 && bytes + size + ledgerRoom(ledger) > budget;
      if (items.length >= limit || full) {
        next = item.id;
        break outer;
      }
      items.push(wire);
      ledger.add(item);
      bytes += size;
    }
  }
  return { items, ...(next === undefined ? {} : { next }), ids: ledger.ids() };
}

/** Bytes the ledger may take once serialised, generously. */
function ledgerRoom(ledger: Ledger): number {
  return 512 + ledger.size * 400;
}

/** Serve `transcript_items:<sid>`: its snapshot is the newest items of the
 * session's feed (caught up before the snapshot is asked for); later frames
 * come from the index as lines are appended. */
export function serveItemsTopic(
  hub: TopicHub,
  feeds: { running(sid: string): { parts: { items: ItemIndex } } | undefined },
): void {
  hub.provideSnapshot("transcript_items", (_conn, sid) => ({
    sid,
    items: sid === undefined ? [] : (feeds.running(sid)?.parts.items.snapshot() ?? []),
  }));
}

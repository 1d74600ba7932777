import type { TranscriptItem } from "../contract/transcripts.js";
import { ClaudeClassifier } from "./claude/transcript-items.js";
import { CodexClassifier } from "./codex/rollout-items.js";
import type {
  CallBook,
  Classified,
  ItemDraft,
  Subject,
  TranscriptClassifier,
} from "./item-builder.js";
import { keyOf } from "./tool-pairs.js";
import type { TranscriptHarness } from "./transcript-files.js";
import type { TranscriptLine } from "./transcript-lines.js";

// Typed items from transcript lines (contract §10, harness.md §6.2). The
// contract owns the vocabulary; which record becomes which item is decided
// here, per harness, so a harness that changes its file format moves a
// classifier and never the wire.
//
// Classification is a pure fold over the lines in file order. Its state is
// small (the turn, the last instant, the API message being streamed, the last
// slash command) and can be saved and restored, so a reader can re-classify
// any stretch of the file from a saved point and get the same items, with the
// same ids, as the first pass did. What a record needs from the whole file —
// which tool a result answers — comes from a CallBook; the links between a
// call and its result are applied afterwards (`finishItems`). Which record
// parts are a call or a result, and their pair keys, come from tool-pairs.ts,
// the rules the session fold pairs by too.

export type {
  CallBook,
  Classified,
  ClassifierState,
  ItemDraft,
  Subject,
  TranscriptClassifier,
} from "./item-builder.js";

export function classifierFor(
  harness: TranscriptHarness,
  calls: CallBook,
  subject: Subject = {},
): TranscriptClassifier {
  return harness === "codex" ? new CodexClassifier(calls) : new ClaudeClassifier(calls, subject);
}

/** Where the other side of a pair is, by pair key (§10.4). */
export interface ItemLinks {
  /** The call item's id. */
  useOf(key: string): string | undefined;
  /** The first result item's id. */
  resultOf(key: string): string | undefined;
}

/**
 * The finished items of one record: a call gets `result_item` when its
 * result is known, a result gets its required `parent_item`. A result whose
 * call is unknown cannot be a result item, so the record is carried as
 * `system:unknown` instead (once, at that result's place).
 */
export function finishItems(
  classified: readonly Classified[],
  record: Record<string, unknown> | undefined,
  links: ItemLinks,
): TranscriptItem[] {
  const out: TranscriptItem[] = [];
  let orphaned = false;
  for (const { item, pair } of classified) {
    if (pair === undefined) {
      out.push(asItem(item));
    } else if (pair.side === "use") {
      const result = links.resultOf(pair.key);
      out.push(asItem(result === undefined ? item : { ...item, result_item: result }));
    } else {
      const parent = links.useOf(pair.key);
      if (parent !== undefined) out.push(asItem({ ...item, parent_item: parent }));
      else if (!orphaned) {
        orphaned = true;
        const { id, uuid, source, at, turn } = item;
        out.push(
          asItem({ id, uuid, source, type: "system:unknown", at, turn, record: record ?? {} }),
        );
      }
    }
  }
  return out;
}

/** The one place a draft becomes a contract item: the classifiers build
 * each type's fields, and the tests validate every item against the schema. */
function asItem(draft: ItemDraft): TranscriptItem {
  return draft as unknown as TranscriptItem;
}

/** Calls and links of a whole transcript held in maps: for reading a file in
 * one pass (tests, small files). The instance keeps a compact equivalent. */
export class PairBook implements CallBook, ItemLinks {
  private readonly calls = new Map<string, { tool: string; offset: number }>();
  private readonly uses = new Map<string, string>();
  private readonly results = new Map<string, string>();

  /** Take in the classified items of the record at `offset`. */
  note(classified: readonly Classified[], offset: number): void {
    for (const { item, pair } of classified) {
      if (pair === undefined) continue;
      if (pair.side === "use") {
        if (this.uses.has(pair.key)) continue;
        this.uses.set(pair.key, item.id);
        const { toolUseId, sub } = keyOf(pair.key);
        if (!sub) this.calls.set(toolUseId, { tool: item.type.slice(5), offset });
      } else if (this.uses.has(pair.key) && !this.results.has(pair.key)) {
        this.results.set(pair.key, item.id);
      }
    }
  }

  toolOf(toolUseId: string, offset: number): string | undefined {
    const call = this.calls.get(toolUseId);
    return call !== undefined && call.offset < offset ? call.tool : undefined;
  }

  useOf(key: string): string | undefined {
    return this.uses.get(key);
  }

  resultOf(key: string): string | undefined {
    return this.results.get(key);
  }
}

/** Every item of a list of lines, linked over all of them. */
export function classifyAll(
  harness: TranscriptHarness,
  lines: Iterable<TranscriptLine>,
  subject: Subject = {},
): { items: TranscriptItem[]; parseErrors: number } {
  const book = new PairBook();
  const classifier = classifierFor(harness, book, subject);
  const records: { classified: Classified[]; record: Record<string, unknown> | undefined }[] = [];
  for (const line of lines) {
    const classified = classifier.classify(line);
    if (classified.length === 0) continue;
    book.note(classified, line.offset);
    records.push({ classified, record: line.record });
  }
  const items = records.flatMap((r) => finishItems(r.classified, r.record, book));
  return { items, parseErrors: classifier.parseErrors };
}

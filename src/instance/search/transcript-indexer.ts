import { type FSWatcher, watch } from "node:fs";
import { stat } from "node:fs/promises";
import { join, sep } from "node:path";
import type { Classified } from "../../harness/item-builder.js";
import { itemText } from "../../harness/item-text.js";
import { foldStates, type ReceiptEvent, ReceiptScan } from "../../harness/receipt-evidence.js";
import { keyOf } from "../../harness/tool-pairs.js";
import {
  type ClassifierState,
  classifierFor,
  type TranscriptClassifier,
} from "../../harness/transcript-classifier.js";
import { containmentRefusal, type TranscriptHarness } from "../../harness/transcript-files.js";
import { readLines, type TranscriptLine } from "../../harness/transcript-lines.js";
import { type Facts, recordSaid } from "../../harness/transcript-search.js";
import {
  type TranscriptFile,
  transcriptAt,
  walkTranscripts,
} from "../../harness/transcript-walk.js";
import type { DocRow, FileRow, SearchWriter } from "../../store/search-index.js";

// Every transcript of the config home into the search index, incrementally
// (DR-0037). Each file is read once from where the index left it — `files`
// keeps its identity (dev:ino), the offset of the last complete line indexed
// and the classifier's state there, all written in the same transaction as
// the rows they account for, so a restart (or a crash) resumes exactly. A
// file replaced or shortened is read again from its start. Lines become typed
// items through the same classifier the transcript ops use; each item with
// words in it becomes one row.
//
// Runs on the index worker's thread. Files already followed are read before
// any catch-up (an append shows within a watch event's time however large
// the backlog), and a catch-up reads one bounded slice of a file at a time.

/** Bytes read from one file before the others get their turn. */
const SLICE_BYTES = 8 << 20;
/** Classifiers kept in memory (the files being appended to); others are
 * rebuilt from their saved state when their file grows. */
const KEEP_CLASSIFIERS = 256;
/** Directories watched at most, shallowest first (the tree, its projects or
 * days, then sessions' sub-agent folders): inotify watches are the user's,
 * shared with every other program. What is not watched is found by the
 * periodic walk. */
const MAX_WATCHES = 1000;

export interface IndexerOptions {
  harness: TranscriptHarness;
  home: string;
  writer: SearchWriter;
  /** A full walk of the tree this often (watches can miss: new directories,
   * inotify limits). */
  rescanMs: number;
  warn(msg: string, fields?: Record<string, unknown>): void;
  /** The backlog is read (true) or there is one again (false). */
  caughtUp(done: boolean): void;
  /** Nothing is left to read (after every run of reading). */
  drained(): void;
  /** What a batch of a session's main transcript said about receipts
   * (DR-0054), once the batch is indexed. */
  receipts?(events: ReceiptEvent[]): void;
}

/** A followed file as the indexer last saw it. */
interface Followed {
  row: FileRow;
  size: number;
  mtime: number;
}

/** A file's reading state kept between slices. */
interface Reader {
  classifier: TranscriptClassifier;
  facts: Facts;
  /** A session's main transcript only. */
  receipts?: ReceiptScan;
}

export class TranscriptIndexer {
  private readonly followed = new Map<string, Followed>();
  private readonly readers = new Map<string, Reader>();
  /** Paths refused once (outside the tree): not checked again. */
  private readonly refused = new Set<string>();
  /** Files to read, newest work first; catch-up work behind live work. */
  private readonly live = new Set<string>();
  private readonly backlog = new Set<string>();
  private readonly watchers = new Map<string, FSWatcher>();
  private pumping = false;
  private walking: Promise<void> | undefined;
  private walkAgain = false;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private wasCaughtUp: boolean | undefined;
  /** Bytes of transcript indexed by this indexer. */
  bytes = 0;

  constructor(private readonly o: IndexerOptions) {
    for (const row of o.writer.files()) this.followed.set(row.path, { row, size: -1, mtime: -1 });
  }

  /** Walk the tree, read what is new, and keep following. */
  start(): Promise<void> {
    const first = this.walk();
    this.timer = setInterval(() => void this.walk(), this.o.rescanMs);
    return first;
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  /** Whether nothing is waiting to be read. */
  get idle(): boolean {
    return this.live.size === 0 && this.backlog.size === 0 && !this.pumping;
  }

  /** Walk the tree: watch its directories, queue files that changed. */
  walk(): Promise<void> {
    if (this.walking !== undefined) {
      this.walkAgain = true;
      return this.walking;
    }
    this.walking = this.walkOnce()
      .catch((error: unknown) => this.o.warn("search: walking transcripts failed", { err: error }))
      .finally(() => {
        this.walking = undefined;
        if (this.walkAgain && !this.closed) {
          this.walkAgain = false;
          void this.walk();
        }
      });
    return this.walking;
  }

  private async walkOnce(): Promise<void> {
    const { files, dirs } = await walkTranscripts(this.o.harness, this.o.home);
    if (this.closed) return;
    const depth = (d: string) => d.split(sep).length;
    for (const dir of dirs.sort((a, b) => depth(a) - depth(b))) {
      if (this.watchers.size >= MAX_WATCHES) break;
      this.watchDir(dir);
    }
    const changed: { path: string; mtime: number }[] = [];
    for (const f of files) {
      const st = await stat(f.path).catch(() => undefined);
      if (st === undefined || !st.isFile()) continue;
      const known = this.followed.get(f.path);
      if (known !== undefined && known.size === st.size && known.mtime === st.mtimeMs) continue;
      changed.push({ path: f.path, mtime: st.mtimeMs });
    }
    // Oldest first: the index's order then follows time across files too.
    changed.sort((a, b) => a.mtime - b.mtime);
    for (const { path } of changed) this.enqueue(path);
    this.pump();
  }

  private watchDir(dir: string): void {
    if (this.watchers.has(dir)) return;
    try {
      const watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null) return void this.walk();
        const path = join(dir, name);
        if (transcriptAt(this.o.harness, this.o.home, path) !== undefined) {
          // Written to now: read before any catch-up.
          this.backlog.delete(path);
          this.live.add(path);
          this.pump();
        } else {
          // A new directory (a project, a session's sub-agents, a Codex day).
          void this.walk();
        }
      });
      watcher.on("error", () => {
        watcher.close();
        if (this.watchers.get(dir) === watcher) this.watchers.delete(dir);
      });
      this.watchers.set(dir, watcher);
    } catch {
      // No watch (inotify limits, a directory gone): the periodic walk follows it.
    }
  }

  private enqueue(path: string): void {
    const known = this.followed.get(path);
    if (known !== undefined && known.size >= 0) this.live.add(path);
    else if (!this.live.has(path)) this.backlog.add(path);
  }

  /** Read queued files until none is left; one pump at a time. */
  private pump(): void {
    if (this.pumping || this.closed) return;
    this.pumping = true;
    void (async () => {
      try {
        for (;;) {
          const path = first(this.live) ?? first(this.backlog);
          if (path === undefined || this.closed) break;
          if (!this.live.has(path)) this.setCaughtUp(false);
          this.live.delete(path);
          this.backlog.delete(path);
          const more = await this.readFile(path).catch((error: unknown) => {
            this.o.warn("search: indexing a transcript failed", { err: error, path });
            return false;
          });
          // A file with more to read goes behind the others.
          if (more) this.backlog.add(path);
        }
      } finally {
        this.pumping = false;
      }
      if (!this.closed) {
        this.setCaughtUp(true);
        this.o.drained();
      }
    })();
  }

  private setCaughtUp(done: boolean): void {
    if (this.wasCaughtUp === done) return;
    this.wasCaughtUp = done;
    this.o.caughtUp(done);
  }

  /** Read one slice of a file; true when it has more. */
  private async readFile(path: string): Promise<boolean> {
    const st = await stat(path).catch(() => undefined);
    // Gone: what it gave stays searchable; a file at the path later is new.
    if (st === undefined || !st.isFile()) return false;
    const identity = `${st.dev}:${st.ino}`;
    let known = this.followed.get(path);
    if (known === undefined) {
      const whose = transcriptAt(this.o.harness, this.o.home, path);
      if (whose === undefined || this.refused.has(path)) return false;
      if ((await containmentRefusal(path, this.o.home, this.o.harness)) !== undefined) {
        this.refused.add(path);
        return false;
      }
      if (this.closed) return false;
      known = { row: this.addFile(whose, identity), size: -1, mtime: -1 };
      this.followed.set(path, known);
    } else if (known.row.identity !== identity || st.size < known.row.offset) {
      this.restart(known, identity);
    }
    known.size = st.size;
    known.mtime = st.mtimeMs;
    if (st.size <= known.row.offset) return false;
    const reader = this.readerOf(known.row);
    const stop = known.row.offset + SLICE_BYTES;
    for await (const batch of readLines(path, known.row.offset, { until: st.size })) {
      if (this.closed) return false;
      this.index(known.row, reader, batch);
      if (known.row.offset >= stop) return known.row.offset < st.size;
    }
    return false;
  }

  private addFile(f: TranscriptFile, identity: string): FileRow {
    const classifier = classifierFor(this.o.harness, NO_CALLS, subjectOf(f.agentId));
    return this.o.writer.batch(() =>
      this.o.writer.addFile(f, identity, JSON.stringify(classifier.save()), EMPTY_FACTS),
    );
  }

  private restart(known: Followed, identity: string): void {
    const { row } = known;
    const state = JSON.stringify(
      classifierFor(this.o.harness, NO_CALLS, subjectOf(row.agent_id ?? undefined)).save(),
    );
    this.o.writer.batch(() => this.o.writer.restartFile(row.id, identity, state, EMPTY_FACTS));
    row.identity = identity;
    row.offset = 0;
    row.state = state;
    row.facts = EMPTY_FACTS;
    this.readers.delete(row.path);
  }

  /** The file's classifier, where the index left it. */
  private readerOf(row: FileRow): Reader {
    let reader = this.readers.get(row.path);
    if (reader !== undefined) {
      // Most recently used last.
      this.readers.delete(row.path);
      this.readers.set(row.path, reader);
      return reader;
    }
    const writer = this.o.writer;
    const classifier = classifierFor(
      this.o.harness,
      {
        toolOf(toolUseId, offset) {
          const call = writer.callOf(row.id, toolUseId);
          return call !== undefined && call.offset < offset ? call.tool : undefined;
        },
      },
      subjectOf(row.agent_id ?? undefined),
    );
    classifier.restore(JSON.parse(row.state) as ClassifierState);
    reader = { classifier, facts: JSON.parse(row.facts) as Facts };
    if (row.agent_id === null && this.o.receipts !== undefined)
      reader.receipts = new ReceiptScan(this.o.harness, row.sid);
    this.readers.set(row.path, reader);
    if (this.readers.size > KEEP_CLASSIFIERS) this.readers.delete(first(this.readers.keys())!);
    return reader;
  }

  /** One batch of lines in one transaction: its rows, its calls, and how far
   * the file is indexed now. */
  private index(row: FileRow, reader: Reader, batch: readonly TranscriptLine[]): void {
    const { writer, harness } = this.o;
    const last = batch.at(-1)!;
    const offset = last.offset + last.bytes;
    let state = "";
    let facts = "";
    const receipts: ReceiptEvent[] = [];
    try {
      writer.batch(() => {
        for (const line of batch) {
          reader.receipts?.line(line.text, line.record, receipts);
          if (line.record !== undefined) recordSaid(harness, line.record, reader.facts);
          const classified = reader.classifier.classify(line);
          for (const c of classified) {
            this.noteCall(row.id, c, line.offset);
            const text = itemText(c.item);
            if (text === "") continue;
            const doc: DocRow = {
              file: row.id,
              sid: row.sid,
              item: c.item.id,
              type: c.item.type,
              at: c.item.at,
              text,
            };
            if (row.agent_id !== null) doc.agentId = row.agent_id;
            // A message in names its sender, as a message's row does.
            const from = c.item.type === "message:session:in" ? c.item.from : undefined;
            if (typeof from === "string") doc.peer = from;
            writer.add(doc);
          }
        }
        state = JSON.stringify(reader.classifier.save());
        facts = JSON.stringify(reader.facts);
        writer.progress(row.id, offset, state, facts);
      });
    } catch (error) {
      // Nothing of the batch was kept: the next read starts where the file's
      // row says, with the classifier as saved there.
      this.readers.delete(row.path);
      throw error;
    }
    this.bytes += offset - row.offset;
    row.offset = offset;
    row.state = state;
    row.facts = facts;
    if (receipts.length > 0) this.o.receipts?.(foldStates(receipts));
  }

  /** A tool call's tool, for the results that follow it. */
  private noteCall(file: number, c: Classified, offset: number): void {
    if (c.pair?.side !== "use") return;
    const { toolUseId, sub } = keyOf(c.pair.key);
    if (!sub) this.o.writer.noteCall(file, toolUseId, c.item.type.slice(5), offset);
  }
}

const EMPTY_FACTS = JSON.stringify({ titles: [] } satisfies Facts);
/** For a classifier made only to save its initial state. */
const NO_CALLS = { toolOf: () => undefined };

function subjectOf(agentId: string | undefined) {
  return agentId === undefined ? {} : { agentId };
}

function first<T>(items: Iterable<T>): T | undefined {
  for (const item of items) return item;
  return undefined;
}

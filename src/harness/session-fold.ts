import { foldClaude } from "./claude/session-fold.js";
import { str } from "./claude/statusline-input.js";
import { foldCodex } from "./codex/session-fold.js";
import { later, type SessionFold } from "./fold-state.js";
import type { TranscriptLine } from "./transcript-lines.js";

// What a session is doing, folded line by line from its transcript (harness
// §6): Claude Code JSONL or a Codex rollout. One pass, no second look at a
// line, and a state that is plain JSON — so it can be cached on disk and
// resumed from a byte offset (fold-cache.ts) or kept live beside a tail
// (the instance's StatusFold). Everything it keeps is bounded: a transcript of
// hundreds of MB folds into a few KB.
//
// This reads raw records, not typed items: it needs what items leave out
// (usage, model, raw tool input, `toolUseResult`), and it classifies nothing.
// It reads the same parsed records the item classifier does (the instance's
// feed hands both the same lines), and finds calls and their results by the
// same rules (tool-pairs.ts); only the calls still open are its to keep.

/** Fold a batch of complete lines, in file order. */
export function foldLines(fold: SessionFold, lines: readonly TranscriptLine[]): void {
  for (const line of lines) foldLine(fold, line);
}

function foldLine(
  fold: SessionFold,
  line: Pick<TranscriptLine, "text" | "record" | "oversized">,
): void {
  const record = line.record;
  if (record === undefined) {
    if (line.oversized) fold.events++;
    else if (line.text.trim() !== "") fold.parseErrors++;
    return;
  }
  fold.events++;
  const at = str(record.timestamp) ?? null;
  if (at !== null) {
    fold.firstEventAt ??= at;
    if (fold.lastEventAt === null || later(at, fold.lastEventAt)) fold.lastEventAt = at;
  }
  if (fold.harness === "codex") foldCodex(fold, record, at);
  else foldClaude(fold, record, at);
}

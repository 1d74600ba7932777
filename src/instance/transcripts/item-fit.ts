import { utf8Length } from "../../contract/frames.js";
import type { TranscriptItem } from "../../contract/transcripts.js";

// Items on the wire must fit a frame (MAX_FRAME_BYTES, 1 MiB) many to a reply,
// but a record can hold a megabyte of shell output or a whole file in an
// attachment. On the wire (typed reads, the topic) long text is cut and a
// large foreign object is replaced by a marker; the whole item is always in a
// dump file, and the raw record stays one `transcript_read` away (`source`).

/** A string field longer than this (UTF-16 units) is cut on the wire. */
export const WIRE_TEXT_MAX = 32 * 1024;
/** A foreign object (`input`, `result`, `attachment`, `record`) whose JSON is
 * longer than this is replaced on the wire. */
export const WIRE_OBJECT_MAX = 64 * 1024;

const FOREIGN = ["input", "result", "attachment", "record"];

/** The item as a reply or topic frame carries it (a copy when anything had
 * to be cut; the item itself otherwise). */
export function wireItem(item: TranscriptItem): TranscriptItem {
  let out: Record<string, unknown> | undefined;
  const fields = item as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(fields)) {
    let fitted: unknown = value;
    if (typeof value === "string" && value.length > WIRE_TEXT_MAX) {
      fitted = `${value.slice(0, WIRE_TEXT_MAX)}… [${value.length - WIRE_TEXT_MAX} more characters]`;
    } else if (FOREIGN.includes(key) || Array.isArray(value)) {
      const json = JSON.stringify(value);
      if (json.length > WIRE_OBJECT_MAX)
        fitted = Array.isArray(value) ? [] : { cut: true, json_chars: json.length };
    }
    if (fitted !== value) {
      out ??= { ...fields };
      out[key] = fitted;
    }
  }
  return (out ?? item) as unknown as TranscriptItem;
}

/** Serialised bytes an item adds to a JSON array (its comma included). */
export function itemBytes(item: TranscriptItem): number {
  return utf8Length(JSON.stringify(item)) + 1;
}

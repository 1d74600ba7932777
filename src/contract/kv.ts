import { type Static, Type } from "@sinclair/typebox";
import { KV_VALUE_MAX_BYTES } from "./constants.js";
import { request, response, topicFrame } from "./envelope.js";
import { utf8Length } from "./frames.js";
import { KvKey, Namespace, Timestamp } from "./identifiers.js";
import { exceedsJsonDepth, tooDeep } from "./json-depth.js";
import { topicNamePattern } from "./topics.js";

// The key-value store (contract §4.3.6, §11). The only promise: a key is
// unique within its namespace. Values are any JSON owned by whoever writes
// them; conflicts resolve by last writer wins on `updated_at`.

/** Any JSON value. */
export const JsonValue = Type.Unknown();

export const KvReadArgs = Type.Object({ ns: Namespace, key: KvKey });
export type KvReadArgs = Static<typeof KvReadArgs>;
export const KvReadResult = Type.Object({ value: JsonValue, updated_at: Timestamp });
export type KvReadResult = Static<typeof KvReadResult>;
export const KvReadRequest = request("kv_read", KvReadArgs);
export const KvReadResponse = response("kv_read", KvReadResult);

export const KvWriteArgs = Type.Object({
  ns: Namespace,
  key: KvKey,
  value: JsonValue,
  /** State it when reporting a write made at another time (e.g. replaying a
   * partition), so a late arrival does not pose as newer; absent = now. */
  updated_at: Type.Optional(Timestamp),
});
export type KvWriteArgs = Static<typeof KvWriteArgs>;
export const KvWriteResult = Type.Object({
  /** What the entry carries now — the caller's stamp, the instance's, or the
   * newer value already held when this write lost. */
  updated_at: Timestamp,
});
export const KvWriteRequest = request("kv_write", KvWriteArgs);

/** The rule no schema states: a value must fit, serialised, in the frames
 * that carry it (KV_VALUE_MAX_BYTES). */
export function kvWriteViolations(args: KvWriteArgs): string[] {
  // Depth first: serialising a value nested thousands deep overflows the stack.
  if (exceedsJsonDepth(args.value)) return [`/value: ${tooDeep("the value")}`];
  const json = JSON.stringify(args.value);
  if (json === undefined || utf8Length(json, KV_VALUE_MAX_BYTES) <= KV_VALUE_MAX_BYTES) return [];
  return [`/value: longer than ${KV_VALUE_MAX_BYTES} bytes as JSON, so no frame could carry it`];
}
export const KvWriteResponse = response("kv_write", KvWriteResult);

/** Idempotent: deleting a missing key is not an error. */
export const KvDeleteArgs = Type.Object({ ns: Namespace, key: KvKey });
export type KvDeleteArgs = Static<typeof KvDeleteArgs>;
export const KvDeleteResult = Type.Object({});
export const KvDeleteRequest = request("kv_delete", KvDeleteArgs);
export const KvDeleteResponse = response("kv_delete", KvDeleteResult);

/** One element of `kv:<ns>` (id = `key`). A removal is a tombstone — `value`
 * absent and `deleted: true` — because an element topic cannot express
 * removal by absence, and the tombstone competes on `updated_at` like any
 * write. Never present in a snapshot. */
export const KvEntry = Type.Union([
  Type.Object({ key: KvKey, value: JsonValue, updated_at: Timestamp }),
  Type.Object({ key: KvKey, updated_at: Timestamp, deleted: Type.Literal(true) }),
]);
export type KvEntry = Static<typeof KvEntry>;
export const KvData = Type.Object({ entries: Type.Array(KvEntry) });
export const KvFrame = topicFrame(topicNamePattern("kv"), KvData);
export type KvFrame = Static<typeof KvFrame>;

/**
 * The one order KV versions compete in (contract §11: last writer wins on
 * `updated_at`), made total so that every replica picks the same winner
 * whatever order versions arrive in (DR-0047): the later stamp wins; on equal
 * stamps a removal beats a value, and between two values the JSON text that
 * is greater byte by byte in UTF-8 wins. Identical versions do not replace
 * each other. Every backend (SQLite, PostgreSQL, replication) decides with
 * this rule; SQL spells it as `convert_to(value, 'UTF8')` comparison.
 */
export interface KvVersion {
  updated_at: number;
  /** The value's JSON text; null for a removal. */
  json: string | null;
}

/** Whether `incoming` replaces `held` (undefined: nothing held). */
export function kvWins(incoming: KvVersion, held: KvVersion | undefined): boolean {
  if (held === undefined) return true;
  if (incoming.updated_at !== held.updated_at) return incoming.updated_at > held.updated_at;
  if (incoming.json === null) return held.json !== null;
  if (held.json === null) return false;
  return Buffer.compare(Buffer.from(incoming.json), Buffer.from(held.json)) > 0;
}

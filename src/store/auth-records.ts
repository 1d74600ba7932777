import type { Db } from "./database.js";

/** A registered passkey (contract §9.4 `CredentialRecord`, plus the web UI
 * origin it was registered from). */
export interface CredentialRow {
  credential_id: string;
  sub: string;
  /** COSE key, Base64Url. */
  public_key: string;
  user_handle: string;
  endpoint: string;
  webui: string;
  rp_id: string;
  sign_count: number;
  backup_eligible: number | null;
  backup_state: number | null;
  issued_label: string | null;
  device_label: string | null;
  registered_at: number;
  registered_ip: string | null;
  registered_user_agent: string | null;
  last_used_at: number | null;
  last_used_ip: string | null;
  last_used_user_agent: string | null;
  deleted_at: number | null;
}

/** A token family: hashes of its refresh values, never the values. */
export interface FamilyRow {
  id: string;
  sub: string;
  iss: string;
  webui: string;
  refresh_hash: string;
  refresh_expires_at: number;
  previous_hash: string | null;
  previous_expires_at: number | null;
  previous_grace_used: number;
  last_refresh: string | null;
  created_at: number;
  dead_at: number | null;
  dead_until: number | null;
}

export interface Rotation {
  familyId: string;
  refreshHash: string;
  refreshExpiresAt: number;
  /** The value that was current: becomes `previous`. Absent on a grace retry,
   * where the current value is retired instead and `previous` stays spent. */
  previous?: { hash: string; expiresAt: number };
  /** Older values, kept until their own expiry so a replay is recognised. */
  retire: { hash: string; expiresAt: number }[];
  graceUsed: boolean;
  lastRefresh: string;
}

/**
 * The auth tables (migration 0008). Reads are plain statements; every write
 * is a method the caller runs on the group commit (CommitQueue), so the
 * instance's connection never waits on SQLite's lock.
 */
export class AuthRecordsStore {
  constructor(private readonly db: Db) {}

  userId(sub: string): string | undefined {
    const row = this.db.prepare("SELECT user_id FROM auth_subjects WHERE sub = ?").get(sub) as
      | { user_id: string }
      | undefined;
    return row?.user_id;
  }

  /** The subjects named `<unit>-<n>` so far, to pick the next n. */
  subjectsOf(unit: string): string[] {
    const rows = this.db
      .prepare("SELECT sub FROM auth_subjects WHERE substr(sub, 1, ?) = ?")
      .all(unit.length + 1, `${unit}-`) as { sub: string }[];
    return rows.map((r) => r.sub);
  }

  addSubject(sub: string, userId: string, now: number): void {
    this.db
      .prepare("INSERT OR IGNORE INTO auth_subjects (sub, user_id, created_at) VALUES (?, ?, ?)")
      .run(sub, userId, now);
  }

  addCredential(
    row: Omit<
      CredentialRow,
      "deleted_at" | "last_used_at" | "last_used_ip" | "last_used_user_agent"
    >,
  ): void {
    this.db
      .prepare(
        `INSERT INTO auth_credentials (credential_id, sub, public_key, user_handle, endpoint, webui,
           rp_id, sign_count, backup_eligible, backup_state, issued_label, device_label,
           registered_at, registered_ip, registered_user_agent)
         VALUES (@credential_id, @sub, @public_key, @user_handle, @endpoint, @webui, @rp_id,
           @sign_count, @backup_eligible, @backup_state, @issued_label, @device_label,
           @registered_at, @registered_ip, @registered_user_agent)`,
      )
      .run(row);
  }

  /** A credential by id, tombstoned ones included (a tombstone refuses). */
  credential(id: string): CredentialRow | undefined {
    return this.db.prepare("SELECT * FROM auth_credentials WHERE credential_id = ?").get(id) as
      | CredentialRow
      | undefined;
  }

  /** Live credentials, oldest first. */
  credentials(): CredentialRow[] {
    return this.db
      .prepare("SELECT * FROM auth_credentials WHERE deleted_at IS NULL ORDER BY registered_at")
      .all() as CredentialRow[];
  }

  /** Whether `sub` still has a live credential (a family outlives none). */
  subjectLive(sub: string): boolean {
    return (
      this.db
        .prepare("SELECT 1 FROM auth_credentials WHERE sub = ? AND deleted_at IS NULL LIMIT 1")
        .get(sub) !== undefined
    );
  }

  /** Whether `sub` was ever registered here (live or tombstoned). */
  subjectKnown(sub: string): boolean {
    return (
      this.db.prepare("SELECT 1 FROM auth_credentials WHERE sub = ? LIMIT 1").get(sub) !== undefined
    );
  }

  used(id: string, signCount: number, now: number, ip: string | null, ua: string | null): void {
    this.db
      .prepare(
        `UPDATE auth_credentials SET sign_count = ?, last_used_at = ?, last_used_ip = ?,
           last_used_user_agent = ? WHERE credential_id = ? AND deleted_at IS NULL`,
      )
      .run(signCount, now, ip, ua, id);
  }

  /** Tombstone every credential of `sub` and kill its families; the count of
   * credentials that were live. */
  removeSubject(sub: string, now: number, familyTombstoneMs: number): number {
    const changed = this.db
      .prepare("UPDATE auth_credentials SET deleted_at = ? WHERE sub = ? AND deleted_at IS NULL")
      .run(now, sub).changes;
    this.db
      .prepare(
        "UPDATE auth_families SET dead_at = ?, dead_until = ? WHERE sub = ? AND dead_at IS NULL",
      )
      .run(now, now + familyTombstoneMs, sub);
    this.db
      .prepare(
        "DELETE FROM auth_access WHERE family_id IN (SELECT id FROM auth_families WHERE sub = ?)",
      )
      .run(sub);
    return changed;
  }

  addFamily(
    row: Pick<
      FamilyRow,
      "id" | "sub" | "iss" | "webui" | "refresh_hash" | "refresh_expires_at" | "created_at"
    >,
  ): void {
    this.db
      .prepare(
        `INSERT INTO auth_families (id, sub, iss, webui, refresh_hash, refresh_expires_at, created_at)
         VALUES (@id, @sub, @iss, @webui, @refresh_hash, @refresh_expires_at, @created_at)`,
      )
      .run(row);
  }

  family(id: string): FamilyRow | undefined {
    return this.db.prepare("SELECT * FROM auth_families WHERE id = ?").get(id) as
      | FamilyRow
      | undefined;
  }

  /** The family a refresh value belongs to, and how it stands there. */
  familyOfRefresh(
    hash: string,
  ): { family: FamilyRow; as: "current" | "previous" | "retired" } | undefined {
    const current = this.db
      .prepare("SELECT * FROM auth_families WHERE refresh_hash = ?")
      .get(hash) as FamilyRow | undefined;
    if (current !== undefined) return { family: current, as: "current" };
    const previous = this.db
      .prepare("SELECT * FROM auth_families WHERE previous_hash = ?")
      .get(hash) as FamilyRow | undefined;
    if (previous !== undefined) return { family: previous, as: "previous" };
    const retired = this.db
      .prepare("SELECT family_id FROM auth_retired WHERE hash = ?")
      .get(hash) as { family_id: string } | undefined;
    const family = retired === undefined ? undefined : this.family(retired.family_id);
    return family === undefined ? undefined : { family, as: "retired" };
  }

  rotate(r: Rotation): void {
    if (r.previous !== undefined)
      this.db
        .prepare(
          `UPDATE auth_families SET previous_hash = ?, previous_expires_at = ?,
             previous_grace_used = 0 WHERE id = ?`,
        )
        .run(r.previous.hash, r.previous.expiresAt, r.familyId);
    this.db
      .prepare(
        `UPDATE auth_families SET refresh_hash = ?, refresh_expires_at = ?, last_refresh = ?,
           previous_grace_used = previous_grace_used OR ? WHERE id = ?`,
      )
      .run(r.refreshHash, r.refreshExpiresAt, r.lastRefresh, r.graceUsed ? 1 : 0, r.familyId);
    const retire = this.db.prepare(
      "INSERT OR REPLACE INTO auth_retired (hash, family_id, expires_at) VALUES (?, ?, ?)",
    );
    for (const old of r.retire) retire.run(old.hash, r.familyId, old.expiresAt);
  }

  /** Kill a family: its tokens refuse from now on. */
  kill(familyId: string, now: number, familyTombstoneMs: number): void {
    this.db
      .prepare(
        "UPDATE auth_families SET dead_at = ?, dead_until = ? WHERE id = ? AND dead_at IS NULL",
      )
      .run(now, now + familyTombstoneMs, familyId);
    this.db.prepare("DELETE FROM auth_access WHERE family_id = ?").run(familyId);
  }

  addAccess(hash: string, familyId: string, expiresAt: number): void {
    this.db
      .prepare("INSERT INTO auth_access (hash, family_id, expires_at) VALUES (?, ?, ?)")
      .run(hash, familyId, expiresAt);
  }

  access(hash: string): { family_id: string; expires_at: number } | undefined {
    return this.db
      .prepare("SELECT family_id, expires_at FROM auth_access WHERE hash = ?")
      .get(hash) as { family_id: string; expires_at: number } | undefined;
  }

  /** Drop what can no longer be presented: expired access and retired hashes,
   * family tombstones past their retention. */
  prune(now: number): void {
    this.db.prepare("DELETE FROM auth_access WHERE expires_at <= ?").run(now);
    this.db.prepare("DELETE FROM auth_retired WHERE expires_at <= ?").run(now);
    this.db
      .prepare("DELETE FROM auth_families WHERE dead_until IS NOT NULL AND dead_until <= ?")
      .run(now);
  }

  /** The web UI origins of live credentials (CORS, the Origin rule). */
  webuiOrigins(): string[] {
    const rows = this.db
      .prepare("SELECT DISTINCT webui FROM auth_credentials WHERE deleted_at IS NULL")
      .all() as { webui: string }[];
    return rows.map((r) => r.webui);
  }
}

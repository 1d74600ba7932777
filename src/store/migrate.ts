import { contractError } from "../contract/errors.js";
import type { Db } from "./database.js";

/** One schema step. `version` only goes up; `name` is for people. */
export interface Migration {
  version: number;
  name: string;
  up(db: Db): void;
}

/**
 * Bring a database to the newest version: the pending steps run in one
 * `BEGIN IMMEDIATE` transaction, and the applied version is read inside it, so
 * two processes opening a fresh file at once never apply a step twice. A file
 * already current is only read — opening writes nothing.
 */
export function migrate(db: Db, migrations: readonly Migration[]): number {
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]!.version <= migrations[i - 1]!.version) {
      throw new Error(`migrations out of order at version ${migrations[i]!.version}`);
    }
  }
  const latest = migrations.at(-1)?.version ?? 0;
  const current = () => db.pragma("user_version", { simple: true }) as number;
  // A file written by a newer ccmsg: running would misread it.
  const check = (v: number) => {
    if (v > latest) {
      throw contractError(
        "internal_error",
        `database schema version ${v} is newer than this build knows (${latest}); upgrade ccmsg`,
      );
    }
  };
  check(current());
  if (current() === latest) return latest;
  db.transaction(() => {
    const v = current();
    check(v);
    for (const m of migrations) {
      if (m.version > v) m.up(db);
    }
    db.pragma(`user_version = ${latest}`);
  }).immediate();
  return latest;
}

import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { m0002EccState } from "../../src/store/migrations/0002-ecc-state.js";
import { m0003WorkItems } from "../../src/store/migrations/0003-work-items.js";
import { isolatedHome, ROOT, runCli } from "../helpers/instance.js";

// A state store of ECC's own tools (issue 28, item 6; ecc-surfaces §3.4):
// `ccmsg board --db` on it takes part in ECC's sibling lock, one operation
// at a time, and never turns it to WAL — so an ECC-style writer (whole-file
// publication under the lock, test/helpers/ecc-writer.mjs) and ccmsg writing
// the same file lose nothing.

const WRITER = join(ROOT, "test", "helpers", "ecc-writer.mjs");

/** A fresh ECC state store: its two migrations, its journal mode (not WAL),
 * no ccmsg schema version. */
function eccStore(): { db: string; env: Record<string, string> } {
  const { root, env } = isolatedHome();
  const db = join(root, "state.db");
  const d = new Database(db);
  m0002EccState.up(d);
  m0003WorkItems.up(d);
  d.close();
  return { db, env };
}

function eccWriter(db: string, count: number, prefix: string): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [WRITER, db, String(count), prefix], {
      stdio: ["ignore", "inherit", "inherit"],
    });
    child.on("close", resolve);
  });
}

const rows = (db: string) => {
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare("SELECT id FROM work_items ORDER BY id").all() as { id: string }[];
  } finally {
    d.close();
  }
};

describe("an ECC state store shared with ECC's own tools", () => {
  it("an ECC-style writer and ccmsg board add 60 items each into one file: all 120 kept, never WAL", async () => {
    const { db, env } = eccStore();
    const ecc = eccWriter(db, 60, "ecc");
    // ccmsg's 60, three commands at a time, while ECC writes.
    const ours: Promise<unknown>[] = [];
    for (let lane = 0; lane < 3; lane++)
      ours.push(
        (async () => {
          for (let i = lane; i < 60; i += 3) {
            const r = await runCli(
              ["board", "add", "--db", db, "--id", `ccmsg-${i}`, "--title", `ccmsg ${i}`, "--json"],
              env,
            );
            expect(r.code, r.stderr).toBe(0);
          }
        })(),
      );
    await Promise.all(ours);
    expect(await ecc).toBe(0);
    const ids = rows(db).map((r) => r.id);
    expect(ids).toHaveLength(120);
    expect(ids.filter((id) => id.startsWith("ecc-"))).toHaveLength(60);
    expect(ids.filter((id) => id.startsWith("ccmsg-"))).toHaveLength(60);
    // The file is still what ECC's engine reads: one file, its journal mode
    // kept, no WAL beside it, no lock left, none of ccmsg's schema.
    expect(readdirSync(join(db, "..")).filter((f) => f.startsWith("state.db"))).toEqual([
      "state.db",
    ]);
    const d = new Database(db, { readonly: true });
    expect(d.pragma("journal_mode", { simple: true })).toBe("delete");
    expect(d.pragma("user_version", { simple: true })).toBe(0);
    expect(d.prepare("SELECT name FROM sqlite_master WHERE name = 'inbox'").get()).toBeUndefined();
    d.close();
    // And ccmsg reads what ECC wrote.
    const listed = await runCli(["board", "list", "--db", db, "--json"], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ totalCount: 120, openCount: 120 });
    // What would put ccmsg's own tables in it is refused, the file untouched.
    const before = readFileSync(db);
    const sync = await runCli(["board", "sync", "github", "--db", db, "--json"], env);
    expect(sync.code).not.toBe(0);
    expect(sync.stderr).toContain("a state store of ECC's own tools");
    expect(readFileSync(db).equals(before)).toBe(true);
  }, 120_000);

  it("waits 5 s for a lock another holds, then STATE_STORE_BUSY; the lock and the file untouched", async () => {
    const { db, env } = eccStore();
    const lock = `${db}.ecc-state.lock`;
    // A holder that looks dead is still never stolen from.
    writeFileSync(lock, `${JSON.stringify({ pid: 999_999_999, hostname: "elsewhere" })}\n`);
    const before = readFileSync(db);
    const started = Date.now();
    const r = await runCli(["board", "add", "--db", db, "--title", "waits", "--json"], env);
    expect(Date.now() - started).toBeGreaterThanOrEqual(5000);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("STATE_STORE_BUSY");
    expect(r.stderr).toContain(lock);
    expect(readFileSync(lock, "utf8")).toContain("999999999");
    expect(readFileSync(db).equals(before)).toBe(true);
    expect(existsSync(`${db}-wal`)).toBe(false);
  }, 30_000);
});

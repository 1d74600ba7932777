// An ECC-style state-store writer (ecc-surfaces §3.4–§3.5), as ECC's own
// engine (sql.js) writes: for each of `count` work items, under the sibling
// `<db>.ecc-state.lock` (created exclusively, pid and hostname in it, a fixed
// 20 ms poll), load the whole file into memory, insert, and publish a whole
// new file by an atomic rename before releasing the lock.
// Usage: node ecc-writer.mjs <db> <count> <prefix>
import { randomBytes } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { createRequire } from "node:module";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";

const Database = createRequire(import.meta.url)("better-sqlite3");
const [db, count, prefix] = process.argv.slice(2);
const lockPath = `${db}.ecc-state.lock`;
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function locked(fn) {
  const deadline = Date.now() + 5000;
  let fd;
  for (;;) {
    try {
      fd = openSync(lockPath, "wx", 0o600);
      break;
    } catch (error) {
      if (error.code !== "EEXIST" || Date.now() > deadline) throw error;
      sleep(20);
    }
  }
  writeSync(fd, `${JSON.stringify({ pid: process.pid, hostname: hostname() })}\n`);
  try {
    fn();
  } finally {
    unlinkSync(lockPath);
    closeSync(fd);
  }
}

for (let i = 0; i < Number(count); i++) {
  locked(() => {
    const mem = new Database(readFileSync(db));
    const now = new Date().toISOString();
    mem
      .prepare(
        "INSERT INTO work_items (id, source, title, status, metadata, created_at, updated_at) VALUES (?, 'ecc', ?, 'open', 'null', ?, ?)",
      )
      .run(`${prefix}-${i}`, `${prefix} ${i}`, now, now);
    const image = mem.serialize();
    mem.close();
    const tmp = join(
      dirname(db),
      `.${basename(db)}.${process.pid}.${randomBytes(8).toString("hex")}.tmp`,
    );
    const fd = openSync(tmp, "wx", 0o600);
    writeSync(fd, image);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, db);
  });
}

// A separate process that takes the database's write lock (BEGIN IMMEDIATE)
// and holds it until told to let go: the contention rig of ecc-surfaces §5.6.
// Messages over IPC: it sends "locked" once it holds the lock; on "release" it
// commits (writing nothing) and exits.
import Database from "better-sqlite3";

const db = new Database(process.argv[2]);
db.pragma("busy_timeout = 5000");
db.exec("BEGIN IMMEDIATE");
process.send("locked");
process.on("message", (m) => {
  if (m !== "release") return;
  db.exec("COMMIT");
  db.close();
  process.exit(0);
});

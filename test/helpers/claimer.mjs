// One of several processes claiming the same items on one board — a
// PostgreSQL URL or a SQLite file: it opens the store, reports "open", waits
// for "go" (an IPC barrier, so all start together), claims every id (on
// PostgreSQL with `concurrency` claims in flight; SQLite's calls are
// synchronous) and reports which it won and which were refused.
import { claimWorkItem } from "../../dist/board/board.js";
import { claimWorkItemPg } from "../../dist/board/pg-board.js";
import { openStateStore } from "../../dist/store/migrated-store.js";
import { PgBoardStore } from "../../dist/store/pg/board-store.js";
import { isPostgresUrl } from "../../dist/store/pg/url.js";

const [location, owner, prefix, count, concurrency] = process.argv.slice(2);
const pg = isPostgresUrl(location);
const store = pg
  ? await PgBoardStore.open(location, { maxConnections: Number(concurrency) })
  : openStateStore(location);
const claim = (id) =>
  pg ? claimWorkItemPg(store, { id, owner }) : claimWorkItem(store, { id, owner });
process.send("open");
process.on("message", async (m) => {
  if (m !== "go") return;
  const won = [];
  const refused = [];
  let next = 0;
  const lane = async () => {
    while (next < Number(count)) {
      const id = `${prefix}-${next++}`;
      try {
        const r = await claim(id);
        if (r.claimed && r.item.owner === owner) won.push(id);
      } catch (error) {
        refused.push(`${id}: ${error.code} ${error.message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: pg ? Number(concurrency) : 1 }, lane));
  await store.close();
  process.send({ won, refused });
  process.exit(0);
});

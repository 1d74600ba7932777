// One of two processes claiming the same items on one PostgreSQL board: it
// opens the store, reports "open", waits for "go" (an IPC barrier, so both
// start together), claims every id with `concurrency` claims in flight, and
// reports which it won.
import { claimWorkItemPg } from "../../dist/board/pg-board.js";
import { PgBoardStore } from "../../dist/store/pg/board-store.js";

const [url, owner, prefix, count, concurrency] = process.argv.slice(2);
const store = await PgBoardStore.open(url, { maxConnections: Number(concurrency) });
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
        const r = await claimWorkItemPg(store, { id, owner });
        if (r.claimed && r.item.owner === owner) won.push(id);
      } catch (error) {
        refused.push(`${id}: ${error.code} ${error.message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Number(concurrency) }, lane));
  await store.close();
  process.send({ won, refused });
  process.exit(0);
});

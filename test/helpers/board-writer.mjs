// One of several processes writing work items through the store module: it
// opens the store, reports "open", waits for "go" (an IPC barrier, so all
// writers start together), writes `count` items and reports "done".
import { upsertWorkItem } from "../../dist/board/board.js";
import { openStateStore } from "../../dist/store/migrated-store.js";

const [dbPath, prefix, count] = process.argv.slice(2);
const store = openStateStore(dbPath);
process.send("open");
process.on("message", (m) => {
  if (m !== "go") return;
  for (let i = 0; i < Number(count); i++)
    upsertWorkItem(store, { id: `${prefix}-${i}`, title: `item ${prefix} ${i}` });
  store.close();
  process.send("done");
  process.exit(0);
});

import { writeFileSync } from "node:fs";
import { arch, cpus, totalmem } from "node:os";
import { benchAttention } from "./attention.js";
import { benchBoard } from "./board.js";
import { benchChurn } from "./churn.js";
import { benchConsole } from "./console.js";
import { benchContract } from "./contract.js";
import { benchFairness } from "./fairness.js";
import { benchFiles } from "./files.js";
import { benchGateway } from "./gateway.js";
import { benchHooks } from "./hooks.js";
import { benchHud } from "./hud.js";
import { benchInstance } from "./instance.js";
import { benchLean } from "./lean.js";
import { benchMesh } from "./mesh.js";
import { benchMeshKv } from "./mesh-kv.js";
import { benchPgstore } from "./pgstore.js";
import { benchPresence } from "./presence.js";
import { benchReservations } from "./reservations.js";
import { benchRestart } from "./restart.js";
import { benchSearch } from "./search.js";
import { benchSessionSearch } from "./session-search.js";
import { benchStatus } from "./status.js";
import { benchTranscriptItems } from "./transcript-items.js";
import { benchTranscripts } from "./transcripts.js";
import { benchTurnCost } from "./turn-cost.js";

// `npm run bench [-- group…]`: runs the named groups (all when none) and prints
// one JSON report; also written to bench/report.json.

const GROUPS: Record<string, () => unknown | Promise<unknown>> = {
  contract: benchContract,
  instance: benchInstance,
  board: benchBoard,
  hud: benchHud,
  hooks: benchHooks,
  presence: benchPresence,
  status: benchStatus,
  "session-search": benchSessionSearch,
  search: benchSearch,
  transcripts: benchTranscripts,
  files: benchFiles,
  "transcripts-items": benchTranscriptItems,
  console: benchConsole,
  reservations: benchReservations,
  gateway: benchGateway,
  pgstore: benchPgstore,
  mesh: benchMesh,
  "mesh-kv": benchMeshKv,
  churn: benchChurn,
  fairness: benchFairness,
  lean: benchLean,
  restart: benchRestart,
  "turn-cost": benchTurnCost,
  attention: benchAttention,
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith("-"));
for (const name of wanted) {
  if (!(name in GROUPS)) {
    process.stderr.write(
      `unknown benchmark group: ${name} (have: ${Object.keys(GROUPS).join(", ")})\n`,
    );
    process.exit(1);
  }
}
const report: Record<string, unknown> = {
  generated_at: new Date().toISOString(),
  machine: {
    node: process.version,
    arch: arch(),
    cpus: cpus().length,
    mem_gib: Math.round(totalmem() / 2 ** 30),
  },
};
for (const name of wanted.length > 0 ? wanted : Object.keys(GROUPS)) {
  process.stderr.write(`bench: ${name}…\n`);
  report[name] = await GROUPS[name]!();
}
const json = JSON.stringify(report, null, 2);
writeFileSync(new URL("./report.json", import.meta.url), `${json}\n`);
process.stdout.write(`${json}\n`);

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileKv, Kv } from "../../src/instance/kv/kv.js";
import { KvReplication } from "../../src/instance/mesh/kv-replication.js";
import { type InstanceStore, openInstanceStore } from "../../src/instance/store/instance-store.js";
import { TopicHub } from "../../src/instance/topic-hub.js";
import { Clock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";
import { type MemoryMesh, memoryMesh } from "./memory-mesh.js";

/** A clock the test sets; each replica has its own (clocks need not agree). */
export class TestClock extends Clock {
  constructor(public t: number) {
    super();
  }
  override now(): number {
    return this.t;
  }
  override advance(ms: number): void {
    this.t += ms;
  }
}

/** One replica: the instance's real store file, its KV engine and replication. */
export interface Replica {
  id: string;
  path: string;
  store: InstanceStore;
  kv: Kv;
  clock: TestClock;
  replication: KvReplication;
  /** Every change subscribers of `kv:<ns>` were sent, as `ns` + entry. */
  heard: { ns: string; key: string; deleted: boolean; value?: unknown }[];
}

/** A stored row as the state replicas must agree on (no local bookkeeping). */
export interface StateRow {
  ns: string;
  key: string;
  value: string | null;
  updated_at: number;
  deleted: number;
}

const silent = silentLogger;

export function openReplica(id: string, path: string, mesh: MemoryMesh, clock: TestClock): Replica {
  const store = openInstanceStore(path, silent);
  const hub = new TopicHub(id, silent);
  const kv = new Kv(
    fileKv(store.kv, (w) => store.queue.run(w)),
    hub,
    clock,
  );
  const heard: Replica["heard"] = [];
  kv.onChange((ns, e) =>
    heard.push({
      ns,
      key: e.key,
      deleted: "deleted" in e,
      ...("value" in e ? { value: e.value } : {}),
    }),
  );
  const replication = new KvReplication({
    port: mesh.port(id),
    kv,
    store: store.kv,
    commit: (w) => store.queue.run(w),
    clock,
    log: silent,
  });
  return { id, path, store, kv, clock, replication, heard };
}

/** Every row, tombstones included, in one order. */
export function stateOf(r: Replica): StateRow[] {
  return r.store.db
    .prepare("SELECT ns, key, value, updated_at, deleted FROM kv ORDER BY ns, key")
    .all() as StateRow[];
}

export function closeReplica(r: Replica): void {
  r.replication.dispose();
  r.store.db.close();
}

/** Replicas on a memory mesh (by default one of just them) in a temp dir. */
export function replicaSet(
  ids: readonly string[],
  mesh: MemoryMesh = memoryMesh(ids),
  start = 1_700_000_000_000,
) {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-kvrep-"));
  const replicas = ids.map((id) =>
    openReplica(id, join(dir, `${id}.db`), mesh, new TestClock(start)),
  );
  return {
    dir,
    mesh,
    replicas,
    close() {
      for (const r of replicas) if (r.store.db.open) closeReplica(r);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Wait until nothing travels, nothing waits to be committed and every link
 * is caught up (three looks in a row), or fail after `ms`. */
export async function settle(mesh: MemoryMesh, replicas: readonly Replica[], ms = 20_000) {
  const deadline = Date.now() + ms;
  let quiet = 0;
  while (quiet < 3) {
    if (Date.now() > deadline) {
      const state = replicas.map((r) => {
        const x = r.replication as unknown as {
          out: Map<string, unknown>;
          applying: number;
          pumpQueued: boolean;
        };
        return {
          id: r.id,
          seq: r.store.kv.seq(),
          out: [...x.out],
          applying: x.applying,
          pumpQueued: x.pumpQueued,
        };
      });
      throw new Error(
        `replication did not settle: ${JSON.stringify({ travelling: mesh.travelling(), state })}`,
      );
    }
    await new Promise((r) => setImmediate(r));
    const calm = mesh.travelling() === 0 && replicas.every((r) => r.replication.idle());
    quiet = calm ? quiet + 1 : 0;
  }
}

import type { CandidateSession } from "../../contract/peers.js";

/** What one peer's relayed frames say about sessions. */
interface PeerSessions {
  /** Connected sessions (its `peers.peers`), with where they work. */
  live: Map<string, { root?: string; ws?: string; activity: number }>;
  /** Sessions it lost (its `peers.last_live`). */
  lost: Set<string>;
  /** Sessions its harness lists (its `agents`). */
  agents: Set<string>;
}

type Category = "live" | "lost" | "agents";

/**
 * Which peer owns a sid, as the relayed `peers` and `agents` frames say
 * (contract §8.1: `peers` rows first, then `agents` rows). Kept as an index
 * updated per frame — a frame replaces what that peer said before — so a
 * request costs a map lookup, never a scan of every row.
 */
export class OwnerIndex {
  private readonly byPeer = new Map<string, PeerSessions>();
  /** sid → the peers listing it, per category. */
  private readonly owners: Record<Category, Map<string, Set<string>>> = {
    live: new Map(),
    lost: new Map(),
    agents: new Map(),
  };

  /** A relayed `peers` value from `peer` replaces its rows. */
  peers(peer: string, data: unknown): void {
    const held = this.peer(peer);
    const d = (data ?? {}) as { peers?: unknown; last_live?: unknown };
    const live: PeerSessions["live"] = new Map();
    for (const row of rows(d.peers)) {
      const root = str(row.repo_root) ?? str(row.cwd);
      const activity = typeof row.last_activity_at === "number" ? row.last_activity_at : 0;
      live.set(row.sid as string, { root, ws: str(row.ws), activity });
    }
    this.replace(peer, "live", new Set(live.keys()));
    held.live = live;
    this.replace(peer, "lost", new Set(rows(d.last_live).map((r) => r.sid as string)));
  }

  /** A relayed `agents` value from `peer` replaces its rows. */
  agents(peer: string, data: unknown): void {
    const d = (data ?? {}) as { agents?: unknown };
    this.replace(peer, "agents", new Set(rows(d.agents).map((r) => r.sid as string)));
  }

  /** Forget everything `peer` said (its values were discarded). */
  drop(peer: string): void {
    for (const category of ["live", "lost", "agents"] as const)
      this.replace(peer, category, new Set());
    this.byPeer.delete(peer);
  }

  /** The peer whose `peers` lists `sid` as connected, if any. */
  liveOwner(sid: string): string | undefined {
    return first(this.owners.live.get(sid));
  }

  /** The peer owning `sid` from a lost row, then from its agents list. */
  otherOwner(sid: string): string | undefined {
    return first(this.owners.lost.get(sid)) ?? first(this.owners.agents.get(sid));
  }

  /** Sessions connected to peers that work in `root` (candidates for a
   * paused or gone addressee), most recently active first. */
  nearby(root: string, except: string, max: number): CandidateSession[] {
    const found: (CandidateSession & { activity: number })[] = [];
    for (const [instance, held] of this.byPeer) {
      for (const [sid, row] of held.live) {
        if (sid === except || row.root !== root) continue;
        const c: CandidateSession & { activity: number } = {
          sid,
          instance,
          activity: row.activity,
        };
        if (row.ws) c.ws = row.ws;
        found.push(c);
      }
    }
    found.sort((a, b) => b.activity - a.activity);
    return found.slice(0, max).map(({ activity: _a, ...c }) => c);
  }

  private peer(peer: string): PeerSessions {
    let held = this.byPeer.get(peer);
    if (held === undefined) {
      held = { live: new Map(), lost: new Set(), agents: new Set() };
      this.byPeer.set(peer, held);
    }
    return held;
  }

  /** Set what `peer` lists in one category, updating the reverse map by the
   * difference only. */
  private replace(peer: string, category: Category, next: Set<string>): void {
    const held = this.peer(peer);
    const before: Iterable<string> =
      category === "live" ? held.live.keys() : (held[category] as Set<string>);
    const owners = this.owners[category];
    for (const sid of before) {
      if (next.has(sid)) continue;
      const set = owners.get(sid);
      set?.delete(peer);
      if (set?.size === 0) owners.delete(sid);
    }
    for (const sid of next) {
      let set = owners.get(sid);
      if (set === undefined) {
        set = new Set();
        owners.set(sid, set);
      }
      set.add(peer);
    }
    if (category !== "live") held[category] = next;
  }
}

/** The rows of a relayed list that carry a sid; anything else is skipped
 * (a peer of this build sends valid rows, but a bad one must not throw). */
function rows(list: unknown): Record<string, unknown>[] {
  if (!Array.isArray(list)) return [];
  return list.filter(
    (r): r is Record<string, unknown> =>
      typeof r === "object" && r !== null && typeof (r as { sid?: unknown }).sid === "string",
  );
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

function first(set: Set<string> | undefined): string | undefined {
  if (set === undefined) return undefined;
  for (const x of set) return x;
  return undefined;
}

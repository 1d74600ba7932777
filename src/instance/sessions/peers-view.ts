import { utf8Length } from "../../contract/frames.js";
import {
  type InstanceInfo,
  type LastLiveSession,
  lostStateOf,
  type PeerInfo,
  peersCutOrder,
} from "../../contract/peers.js";
import type { Logger } from "../../util/logger.js";
import type { Sessions } from "./sessions.js";

/** One row serialised, and its size in a list (its comma counted). */
interface RowJson {
  json: string;
  bytes: number;
}

/** last_live serialised, as of one version of it. */
interface LastLivePart {
  version: number;
  rows: LastLiveSession[];
  json: string;
  bytes: number;
}

/**
 * The `peers` value of this instance as JSON, cheap while sessions come and
 * go: a last_live row is frozen when its session is lost, so each is
 * serialised once, and the joined list is kept until last_live changes — a
 * change among the connected sessions costs only their rows. What does not
 * fit the frame's budget is left out exactly as `fitPeers` leaves it out.
 */
export class PeersView {
  private readonly rowJson = new WeakMap<LastLiveSession, RowJson>();
  private lastLive: LastLivePart | undefined;
  private leftOut = 0;

  constructor(
    private readonly sessions: Sessions,
    private readonly instances: () => InstanceInfo[],
    private readonly log: Logger,
  ) {}

  /** `{ peers, last_live, instances }` serialised within `budget` bytes. */
  json(budget: number): string {
    const live = this.sessions.livePeers();
    const liveJson = live.map(serialised);
    const lost = this.lastLivePart();
    const tail = `,"instances":${JSON.stringify(this.instances())}`;
    // Sizes as fitPeers counts them: every row with a comma, so the cut is
    // the same rows; the exact size decides whether anything is cut.
    let total = utf8Length(`{"peers":[],"last_live":[]${tail}}`) + lost.bytes;
    for (const r of liveJson) total += r.bytes;
    const exact = total - (live.length > 0 ? 1 : 0) - (lost.rows.length > 0 ? 1 : 0);
    if (exact <= budget) {
      this.report(0);
      return `{"peers":[${liveJson.map((r) => r.json).join(",")}],"last_live":[${lost.json}]${tail}}`;
    }
    const size = new Map<object, number>();
    for (const [i, row] of live.entries()) size.set(row, liveJson[i]!.bytes);
    for (const row of lost.rows) size.set(row, this.row(row).bytes);
    const out = new Set<object>();
    for (const row of peersCutOrder(lost.rows, live)) {
      if (total <= budget) break;
      out.add(row);
      total -= size.get(row)!;
    }
    this.report(out.size);
    const peers = liveJson.filter((_, i) => !out.has(live[i]!)).map((r) => r.json);
    const lastLive = lost.rows.filter((r) => !out.has(r)).map((r) => this.row(r).json);
    return `{"peers":[${peers.join(",")}],"last_live":[${lastLive.join(",")}]${tail}}`;
  }

  /** last_live joined, recomputed only when it changed: a new version, or a
   * row past its retention (the list only shrinks with time). */
  private lastLivePart(): LastLivePart {
    const version = this.sessions.lastLiveVersion;
    const rows = this.sessions.lastLiveRows();
    const held = this.lastLive;
    if (held !== undefined && held.version === version && held.rows.length === rows.length)
      return held;
    let bytes = 0;
    const parts: string[] = [];
    for (const row of rows) {
      const r = this.row(row);
      parts.push(r.json);
      bytes += r.bytes;
    }
    this.lastLive = { version, rows, json: parts.join(","), bytes };
    return this.lastLive;
  }

  private row(row: LastLiveSession): RowJson {
    let r = this.rowJson.get(row);
    if (r === undefined) {
      r = serialised({ ...row, state: lostStateOf(row) });
      this.rowJson.set(row, r);
    }
    return r;
  }

  private report(leftOut: number): void {
    if (leftOut !== this.leftOut && leftOut > 0)
      this.log.warn({ left_out: leftOut }, "peers frame: rows left out to fit MAX_FRAME_BYTES");
    this.leftOut = leftOut;
  }
}

function serialised(row: PeerInfo | LastLiveSession): RowJson {
  const json = JSON.stringify(row);
  return { json, bytes: utf8Length(json) + 1 };
}

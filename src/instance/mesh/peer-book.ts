import { type PeerRow, writePeersFileAsync } from "../../config/mesh.js";
import type { Link } from "./link.js";

// The peers this instance trusts (DR-0047): the config's `mesh.endpoints`
// and `<state dir>/mesh.json` as rows, and one Peer per endpoint with what is
// known of it. The rows are the trust; a Peer is their live state.

export type RowSource = "config" | "file" | "config+file";

export interface Peer {
  endpoint: string;
  /** The id a row states; a greeting naming another is refused. */
  configuredId?: string;
  /** Bound once a handshake with it passed; `instances()` shows no id
   * before that (contract §8), whatever its row states. */
  id?: string;
  /** What the peer said of itself (`{"mesh":"about"}`, or the ack). */
  host?: string;
  /** The kept link; `links` also holds a glare twin until it is closed. */
  link?: Link<Peer>;
  links: Set<Link<Peer>>;
  retry?: NodeJS.Timeout;
  /** Failed dials since the last link (the backoff's exponent). */
  failures: number;
  lastError?: string;
  /** No longer listed: nothing dials it again. */
  removed: boolean;
}

export class PeerBook {
  readonly peers = new Map<string, Peer>();
  private fileRows: PeerRow[];
  private fileWrite: Promise<void> = Promise.resolve();

  constructor(
    private readonly configRows: readonly PeerRow[],
    fileRows: PeerRow[],
    private readonly file: string,
    /** Whether a row names this instance itself. */
    private readonly isSelf: (row: PeerRow) => boolean,
  ) {
    this.fileRows = [...fileRows];
  }

  /** A Peer for every listed row but this instance's own. */
  load(): void {
    for (const row of this.configRows) this.upsert(row);
    for (const row of this.fileRows) this.upsert(row);
  }

  /** Every listed row with where it comes from, this instance's own left out. */
  rows(): (PeerRow & { source: RowSource })[] {
    const out = new Map<string, PeerRow & { source: RowSource }>();
    for (const r of this.configRows) out.set(r.endpoint, { ...r, source: "config" });
    for (const r of this.fileRows) {
      const had = out.get(r.endpoint);
      out.set(r.endpoint, had ? { ...had, source: "config+file" } : { ...r, source: "file" });
    }
    return [...out.values()].filter((r) => !this.isSelf(r));
  }

  /** The row an endpoint or an id (stated or proven) names. */
  find(endpoint: string | undefined, id: string): (PeerRow & { source: RowSource }) | undefined {
    return this.rows().find(
      (r) => r.endpoint === endpoint || r.id === id || this.peers.get(r.endpoint)?.id === id,
    );
  }

  /** Put a row in mesh.json (replacing one of the same endpoint); false
   * when it was there already, as is. */
  async addRow(row: PeerRow): Promise<boolean> {
    const at = this.fileRows.findIndex((r) => r.endpoint === row.endpoint);
    if (at >= 0 && this.fileRows[at]!.id === row.id) return false;
    const rows = [...this.fileRows];
    if (at >= 0) rows[at] = row;
    else rows.push(row);
    await this.save(rows);
    return true;
  }

  async removeRow(endpoint: string): Promise<void> {
    await this.save(this.fileRows.filter((r) => r.endpoint !== endpoint));
  }

  /** Writes one at a time, each whole (0600, temp file then rename). */
  private save(rows: PeerRow[]): Promise<void> {
    const write = this.fileWrite.then(() => writePeersFileAsync(this.file, rows));
    this.fileWrite = write.catch(() => {});
    return write.then(() => {
      this.fileRows = rows;
    });
  }

  /** The Peer of a row, made when new; a config row's id outranks the file's. */
  upsert(row: PeerRow): Peer | undefined {
    if (this.isSelf(row)) return undefined;
    let peer = this.peers.get(row.endpoint);
    if (peer === undefined) {
      peer = { endpoint: row.endpoint, links: new Set(), failures: 0, removed: false };
      this.peers.set(row.endpoint, peer);
    }
    const configId = this.configRows.find((r) => r.endpoint === row.endpoint)?.id;
    const id = configId ?? row.id;
    if (id !== undefined) peer.configuredId = id;
    return peer;
  }

  /** A peer no longer listed. */
  drop(peer: Peer): void {
    peer.removed = true;
    this.peers.delete(peer.endpoint);
  }
}

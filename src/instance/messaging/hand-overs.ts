import type { HandOverMode } from "../../contract/connect.js";
import type { Sid } from "../../contract/identifiers.js";
import type { InboxMessage } from "../../contract/messaging.js";
import type { Connection } from "../wire/connection.js";

/** Who holds claims: a connection, or an in-process hand-over (the http
 * hook route's, DR-0058) — any object, compared by identity. */
export type Claimant = Connection | object;

/** How long a sender waits to learn whether a claimed message was passed on
 * before it is told the message is held (`preparing`). A waiter confirms in
 * milliseconds; this bounds a stopped one. */
export const HAND_OVER_REPLY_MS = 5000;

interface Claim {
  sid: Sid;
  counter: number;
  /** Being recorded delivered: no longer released, still skipped by takes. */
  settling: boolean;
}

/**
 * Inbox messages claimed by hand-over subscriptions (DR-0024): held in the
 * store until their subscriber confirms it passed them on, and meanwhile
 * nobody else's. Also the fates senders wait on: a message sent to a waiter
 * answers `delivered` only once confirmed.
 */
export class HandOvers {
  private readonly modes = new WeakMap<Claimant, HandOverMode>();
  private readonly byConn = new Map<Claimant, Map<number, Claim>>();
  private readonly bySid = new Map<Sid, Map<number, Claimant>>();
  private readonly fates = new Map<number, (handed: boolean) => void>();

  /** Mark `conn`'s inbox subscription as a hand-over one (or, undefined, a
   * plain one again). */
  arm(conn: Claimant, mode: HandOverMode | undefined): void {
    if (mode === undefined) this.modes.delete(conn);
    else this.modes.set(conn, mode);
  }

  mode(conn: Claimant): HandOverMode | undefined {
    return this.modes.get(conn);
  }

  /** Counters of `sid` claimed by anyone: left out of every other take. */
  claimed(sid: Sid): ReadonlySet<number> {
    return new Set(this.bySid.get(sid)?.keys());
  }

  /** Claim held messages (oldest first) for `conn`, passing over its own
   * claims and stopping at the first another connection holds: a message on
   * its way elsewhere is never passed (DR-0053). Returns the messages now
   * claimed by `conn`, in the given order. */
  claim(conn: Claimant, sid: Sid, held: { counter: number; message: InboxMessage }[]) {
    const owners = this.bySid.get(sid) ?? new Map<number, Claimant>();
    const mine = this.byConn.get(conn) ?? new Map<number, Claim>();
    const claimed: InboxMessage[] = [];
    for (const { counter, message } of held) {
      const owner = owners.get(counter);
      if (owner === conn) continue;
      if (owner !== undefined) break;
      owners.set(counter, conn);
      mine.set(counter, { sid, counter, settling: false });
      claimed.push(message);
    }
    if (owners.size > 0) this.bySid.set(sid, owners);
    if (mine.size > 0) this.byConn.set(conn, mine);
    return claimed;
  }

  /** The connection holding a claim on this message, if any. */
  owner(sid: Sid, counter: number): Claimant | undefined {
    return this.bySid.get(sid)?.get(counter);
  }

  /** Whether a connection other than `conn` holds a claim on a message of
   * `sid`. */
  claimedByOther(sid: Sid, conn?: Claimant): boolean {
    const owners = this.bySid.get(sid);
    if (owners === undefined) return false;
    for (const owner of owners.values()) if (owner !== conn) return true;
    return false;
  }

  /** The claims `conn` holds on exactly these counters, marked settling —
   * or undefined (nothing changed) unless every one is its claim. With
   * `some`, those of them it still holds and is not settling already. */
  beginSettle(conn: Claimant, counters: readonly number[], some = false): Claim[] | undefined {
    const mine = this.byConn.get(conn);
    const found = counters.map((c) => mine?.get(c));
    const claims = found.filter((c): c is Claim => c !== undefined && !c.settling);
    if (!some && claims.length !== counters.length) return undefined;
    for (const c of claims) c.settling = true;
    return claims;
  }

  /** Settling ended: recorded (fates say delivered) or not (released). */
  endSettle(conn: Claimant, claims: Claim[], recorded: boolean): Claim[] {
    for (const c of claims) c.settling = false;
    if (!recorded) return this.drop(conn, claims);
    this.drop(conn, claims);
    for (const c of claims) this.settleFate(c.counter, true);
    return [];
  }

  /** Release every claim of `conn` that is not being recorded. */
  releaseAll(conn: Claimant): Claim[] {
    const mine = this.byConn.get(conn);
    if (mine === undefined) return [];
    return this.drop(
      conn,
      [...mine.values()].filter((c) => !c.settling),
    );
  }

  /** A claimed message left the inbox another way (dropped by overflow). */
  forget(sid: Sid, counter: number): void {
    const conn = this.bySid.get(sid)?.get(counter);
    const claim = conn === undefined ? undefined : this.byConn.get(conn)?.get(counter);
    if (conn !== undefined && claim !== undefined) this.drop(conn, [claim]);
  }

  private drop(conn: Claimant, claims: Claim[]): Claim[] {
    const mine = this.byConn.get(conn);
    for (const c of claims) {
      mine?.delete(c.counter);
      const owners = this.bySid.get(c.sid);
      owners?.delete(c.counter);
      if (owners?.size === 0) this.bySid.delete(c.sid);
    }
    if (mine?.size === 0) this.byConn.delete(conn);
    return claims;
  }

  /** Whether anyone holds a claim on this counter now. */
  isClaimed(sid: Sid, counter: number): boolean {
    return this.bySid.get(sid)?.has(counter) ?? false;
  }

  /** Wait (at most HAND_OVER_REPLY_MS) for a held message's fate: true once
   * recorded delivered, false when it is (still) held. */
  fate(counter: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settleFate(counter, false), HAND_OVER_REPLY_MS);
      timer.unref();
      this.fates.set(counter, (handed) => {
        clearTimeout(timer);
        resolve(handed);
      });
    });
  }

  settleFate(counter: number, handed: boolean): void {
    const resolve = this.fates.get(counter);
    if (resolve === undefined) return;
    this.fates.delete(counter);
    resolve(handed);
  }
}

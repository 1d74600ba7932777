import { join } from "node:path";
import { loadConfig } from "../../config/config.js";
import { INBOX_RETENTION_MS } from "../../contract/constants.js";
import { renderDirectDelivery } from "../../contract/direct-delivery.js";
import type { Mid, Sid } from "../../contract/identifiers.js";
import type { InboxMessage, MessageSendResult } from "../../contract/messaging.js";
import type { ReceiptRoute } from "../../contract/receipts.js";
import { deliverToSocket, SUPPORTED_PEER_PROTOCOL } from "../../harness/claude/messaging-socket.js";
import { findSessionFile, type SessionFile } from "../../harness/claude/session-files.js";
import { codexThread, queueIntoCodex } from "../../harness/codex/queue.js";
import { PathChanges } from "../../harness/path-changes.js";
import { locateTranscript } from "../../harness/transcript-files.js";
import { transcriptMentions } from "../../harness/transcript-mentions.js";
import { configFile } from "../../state/paths.js";
import type { InboxStore } from "../../store/inbox.js";
import type { Logger } from "../../util/logger.js";
import { sha256Hex } from "../../util/sha256.js";

// Route (a) of message delivery (contract §7.7 step 3, harness.md §5.2, §7.3;
// DR-0026): straight into the recipient's harness, before the `inbox` topic.
// Its outcome is delivered, parked (the harness keeps it for its person to
// release: handed over all the same, answered `delivered`), refused (the
// harness declined: hold, `throttled`) or unavailable (any precondition or
// step failed: the next route decides).

/** Finding the recipient's state file may take this long. */
export const FIND_BUDGET_MS = 1000;

/** Where the instance's harness lives and whether route (a) is on. */
export interface DirectSetup {
  enabled: boolean;
  harness: "claude" | "codex";
  /** The config home this instance serves. */
  home: string;
  /** The `codex` executable (a name on PATH or a path). */
  codexCommand: string;
  env: NodeJS.ProcessEnv;
  /** The state-file lookup (a seam for tests). */
  find?: (home: string, sid: Sid) => Promise<StateRow | undefined>;
}

/** What route (a) needs from messaging: its ways to keep and record, and
 * what the other routes hold (DR-0053: oldest first on every route). */
export interface DirectHooks {
  hold(sid: Sid, counter: number, message: InboxMessage): Promise<MessageSendResult>;
  recordDelivered(
    sid: Sid,
    counter: number,
    message: InboxMessage,
    route: DirectRouteName,
    parked?: boolean,
  ): Promise<void>;
  /** Route (a) stopped with messages for `sid` still held: hand them to the
   * session's `inbox` subscriber, if it has one. */
  offerElsewhere(sid: Sid): void;
  /** Held messages of `sid` a subscriber has claimed: an offer stops at the
   * first (it never passes one on its way elsewhere). */
  claimedElsewhere(sid: Sid): ReadonlySet<number>;
  /** Whether a message of `sid` is held or on its way on another route: a
   * new message must not overtake it. */
  behind(sid: Sid): boolean;
  /** A held message went through route (a): a sender waiting to hear its
   * fate hears it. */
  delivered(sid: Sid, counter: number): void;
}

/** Route (a)'s name in a receipt. */
export type DirectRouteName = Extract<ReceiptRoute, "socket" | "codex">;

/** What route (a) reads of a state file. */
type StateRow = Pick<SessionFile, "pid" | "sessionId" | "messagingSocketPath" | "peerProtocol">;
type Target = { kind: "claude"; row: StateRow } | { kind: "codex" };
type Outcome = "delivered" | "parked" | "refused" | "unavailable";

/** The setup of an instance serving `home` of `harness`: ccmsg's config
 * file says whether route (a) is on (a config that cannot be read keeps the
 * default, and the log says why). */
export function directSetup(
  env: NodeJS.ProcessEnv,
  harness: "claude" | "codex",
  home: string,
  log: Logger,
): DirectSetup {
  let config: ReturnType<typeof loadConfig> = {};
  try {
    config = loadConfig(configFile(undefined, env));
  } catch (error) {
    log.error({ err: error }, "config not read: direct delivery keeps its default (on)");
  }
  return {
    enabled: config.direct_delivery !== false,
    harness,
    home,
    codexCommand: config.codex_command ?? "codex",
    env,
  };
}

/**
 * Route (a) for one instance. Per recipient at most one exchange runs at a
 * time — a new message or an offer of held ones; a message that finds one
 * running, or older ones held, is held and answered `throttled` ("already
 * being handed one"), and the offer hands them over oldest first. Lookups of
 * one sid settle in the order their sends came, so route (b) keeps that order
 * too.
 */
export class DirectRoute {
  private readonly busy = new Set<Sid>();
  private readonly lookups = new Map<Sid, Promise<Target | undefined>>();
  private readonly find;
  /** Changes to the directory lookups read; while none happened, a sid found
   * to have no harness there still has none (the hot path of a send). */
  private readonly changes: PathChanges | undefined;
  private readonly absent = new Set<Sid>();
  private absentAt = -1;

  constructor(
    private readonly setup: DirectSetup,
    private readonly inbox: InboxStore,
    private readonly hooks: DirectHooks,
    private readonly now: () => number,
    private readonly log: Logger,
  ) {
    this.find = setup.find ?? findSessionFile;
    if (setup.enabled) {
      const dir = setup.harness === "codex" ? "thread-writer-locks" : "sessions";
      this.changes = new PathChanges(join(setup.home, dir));
    }
  }

  /**
   * Try route (a) for a new message: the reply when it settled the message
   * (delivered, or held as `throttled`), `undefined` when it is unavailable
   * and the next route must decide.
   */
  async send(
    sid: Sid,
    counter: number,
    message: InboxMessage,
  ): Promise<MessageSendResult | undefined> {
    if (!this.setup.enabled || this.knownAbsent(sid)) return undefined;
    const target = await this.inOrder(sid, this.locate(sid));
    if (target === undefined) return undefined;
    if (this.busy.has(sid) || this.hooks.behind(sid)) {
      // Never past an older message: held (its write queued now, so the
      // offer's claim sees it) and handed over in its turn.
      const held = this.hooks.hold(sid, counter, message);
      if (!this.busy.has(sid)) {
        this.busy.add(sid);
        void this.offerHeldNow(sid, target);
      }
      return held;
    }
    this.busy.add(sid);
    // Nothing held meanwhile leaves on another route before this one.
    this.inbox.claimNew(sid, counter);
    const outcome = await this.exchange(target, sid, message);
    if (outcome === "delivered") {
      // Handed over: the reply says so whatever happens to the record.
      await this.hooks.recordDelivered(sid, counter, message, this.route);
      this.inbox.dropClaim(sid, counter);
      void this.offerHeldNow(sid, target);
      return { delivered: true };
    }
    this.inbox.dropClaim(sid, counter);
    if (outcome === "parked") {
      this.release(sid, false);
      // The harness has it and shows it once its person releases it: handed
      // over, so recorded and answered so — offering it again would deliver
      // it twice, and around the gate its person set.
      await this.hooks.recordDelivered(sid, counter, message, this.route, true);
      return { delivered: true };
    }
    if (outcome === "refused") {
      const held = this.hooks.hold(sid, counter, message);
      this.release(sid, true);
      return held;
    }
    // The next route takes this one, the oldest: it holds it before it
    // offers what was held meanwhile.
    this.release(sid, false);
    return undefined;
  }

  /** Offer what is held for `sid` through route (a), oldest first, stopping
   * at the first that does not get through (an event: the session is live
   * again, or a subscriber's claims ended). Nothing happens while an
   * exchange for it runs. */
  async offerHeld(sid: Sid): Promise<void> {
    if (!this.setup.enabled || this.busy.has(sid) || this.knownAbsent(sid)) return;
    const target = await this.locate(sid);
    if (target === undefined || this.busy.has(sid)) return;
    this.busy.add(sid);
    await this.offerHeldNow(sid, target);
  }

  /** The offer loop; the caller has marked `sid` busy, and it ends so. It
   * stops at the first message that does not get through, or that a
   * subscriber has claimed (messaging calls `offerHeld` again once that
   * claim ends). */
  private async offerHeldNow(sid: Sid, target: Target): Promise<void> {
    let outcome: Outcome = "delivered";
    try {
      for (;;) {
        // Synchronous from the claim to the release below when nothing is
        // left, so a message held meanwhile is either claimed here or finds
        // the sid free.
        const elsewhere = this.hooks.claimedElsewhere(sid);
        const claim = this.inbox.claimOldest(sid, this.now(), INBOX_RETENTION_MS, elsewhere);
        if (claim === undefined) break;
        // On disk before the harness has it: a crash during the exchange
        // leaves the message in doubt, settled by the transcript (DR-0050).
        outcome = await this.inbox.offering(sid, claim.counter, this.now()).then(
          () => this.exchange(target, sid, claim.message),
          () => "unavailable" as const,
        );
        const through = outcome === "delivered" || outcome === "parked";
        await this.inbox
          .settleClaim(sid, claim.counter, through, this.now(), this.route, outcome === "parked")
          .catch((error: unknown) => {
            this.log.warn({ err: error, sid, mid: claim.message.mid }, "delivery not recorded");
          });
        if (through) this.hooks.delivered(sid, claim.counter);
        if (outcome !== "delivered") break;
      }
    } catch (error) {
      this.log.warn({ err: error, sid }, "held messages not offered through the harness");
    }
    // A parked message waits for its person: the rest must not pass it.
    this.release(sid, outcome !== "parked");
  }

  /**
   * Settle the held messages the last run was handing to a harness when it
   * ended (DR-0050): one the session's transcript records reached the model
   * and is recorded delivered; any other is held again. Returns the sids
   * settled: what they hold waited for this, and is to be offered.
   */
  async settleInDoubt(): Promise<Set<Sid>> {
    const settled = new Set<Sid>();
    const bySid = new Map<Sid, ReturnType<InboxStore["inDoubtMessages"]>>();
    for (const row of this.inbox.inDoubtMessages())
      bySid.set(row.sid, [...(bySid.get(row.sid) ?? []), row]);
    for (const [sid, rows] of bySid) {
      const path = await locateTranscript(this.setup.harness, this.setup.home, sid).catch(
        () => undefined,
      );
      const mentioned =
        path === undefined
          ? new Set<string>()
          : await transcriptMentions(
              path,
              rows.map((r) => r.message.mid),
            );
      const work = rows.map(async ({ counter, message }) => {
        const arrived = mentioned.has(message.mid);
        try {
          await this.inbox.settleInDoubt(counter, arrived, this.now(), this.route);
          this.log.info({ sid, mid: message.mid, arrived }, "hand-over in doubt settled");
          settled.add(sid);
        } catch (error) {
          this.log.warn({ err: error, sid, mid: message.mid }, "hand-over in doubt not settled");
        }
      });
      await Promise.all(work);
    }
    return settled;
  }

  /** The exchanges for `sid` end; with `offerRest`, what is still held goes
   * to the session's subscriber, if it has one. */
  private release(sid: Sid, offerRest: boolean): void {
    this.busy.delete(sid);
    if (offerRest) this.hooks.offerElsewhere(sid);
  }

  /** What a receipt calls this route. */
  get route(): DirectRouteName {
    return this.setup.harness === "codex" ? "codex" : "socket";
  }

  /** Whether an exchange for `sid` runs now. */
  isBusy(sid: Sid): boolean {
    return this.busy.has(sid);
  }

  /** Whether `sid` had no harness at the last look and nothing changed
   * since (and no lookup of it is still running, which keeps sends in order). */
  private knownAbsent(sid: Sid): boolean {
    const changes = this.changes;
    if (changes?.armed !== true || this.lookups.has(sid)) return false;
    return this.absentAt === changes.generation && this.absent.has(sid);
  }

  private noteAbsent(sid: Sid, generation: number | undefined): void {
    const changes = this.changes;
    if (changes?.armed !== true || generation !== changes.generation) return;
    if (this.absentAt !== generation) {
      this.absent.clear();
      this.absentAt = generation;
    }
    this.absent.add(sid);
  }

  /** Where route (a) would write for `sid`, or `undefined` (unavailable). */
  private async locate(sid: Sid): Promise<Target | undefined> {
    const generation = this.changes?.generation;
    if (this.setup.harness === "codex") {
      const thread = await codexThread(this.setup.home, sid);
      if (thread === "running") return { kind: "codex" };
      // A lock left behind may be taken again without a change to the directory.
      if (thread === "absent") this.noteAbsent(sid, generation);
      return undefined;
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((r) => {
      timer = setTimeout(() => r("late"), FIND_BUDGET_MS);
    });
    try {
      // A lookup that failed or ran late says nothing about absence.
      const found = this.find(this.setup.home, sid).catch(() => "late" as const);
      const row = await Promise.race([found, late]);
      if (row === "late") return undefined;
      if (row === undefined) {
        this.noteAbsent(sid, generation);
        return undefined;
      }
      // The cheap preconditions; the key file is read by the exchange.
      if (row.peerProtocol !== SUPPORTED_PEER_PROTOCOL || !row.messagingSocketPath)
        return undefined;
      return { kind: "claude", row };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Settle `p` only after every earlier lookup of `sid` settled. */
  private inOrder(sid: Sid, p: Promise<Target | undefined>): Promise<Target | undefined> {
    const before = this.lookups.get(sid);
    const mine = before === undefined ? p : before.then(() => p);
    this.lookups.set(sid, mine);
    void mine.then(() => {
      if (this.lookups.get(sid) === mine) this.lookups.delete(sid);
    });
    return mine;
  }

  private async exchange(target: Target, sid: Sid, message: InboxMessage): Promise<Outcome> {
    const content = renderDirectDelivery(message);
    try {
      const result =
        target.kind === "claude"
          ? await deliverToSocket(target.row, {
              configHome: this.setup.home,
              sid,
              msgId: harnessMsgId(message.mid),
              content,
            })
          : await queueIntoCodex({
              command: this.setup.codexCommand,
              codexHome: this.setup.home,
              thread: sid,
              message: content,
              env: this.setup.env,
            });
      if (result.outcome !== "delivered")
        this.log.info({ sid, mid: message.mid, ...result }, "direct delivery: not through");
      return result.outcome;
    } catch (error) {
      this.log.warn({ err: error, sid, mid: message.mid }, "direct delivery failed");
      return "unavailable";
    }
  }
}

/**
 * The harness frame's `msg_id` for a mid: Claude Code keeps (and names in its
 * refusals) only a UUID there, so the mid is mapped to one, the same every
 * time the message is offered.
 */
export function harnessMsgId(mid: Mid): string {
  const h = sha256Hex(mid);
  const variant = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

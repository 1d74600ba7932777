import { realpathSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ContractError } from "../contract/errors.js";
import type { KvEntry } from "../contract/kv.js";
import {
  GLOB_MAX_LENGTH,
  hasWildcard,
  holderKey,
  isOwn,
  type KeyedReservation,
  literalPrefix,
  liveReservations,
  parseDuration,
  REASON_MAX_LENGTH,
  RESERVATIONS_NS,
  type Reservation,
  reservationConflicts,
} from "../contract/reservations.js";
import { describe, shown, uniqueByKey } from "../harness/reservation-words.js";
import { sha256 } from "../util/sha256.js";
import type { Client } from "./client.js";
import { connectInstance, sendGreeting } from "./connect.js";
import { type Flags, UsageError } from "./flags.js";

export { describe, shown, uniqueByKey };

// File reservations over KV (DR-0041), for the CLI's commands and hook and
// for the MCP server's tools: reading namespace `reservations`, reserving and
// releasing with the conflict rules, and how a reservation reads to a person.
// The store is the person's, so the connection is greeted as the person and
// the holding session is named inside the value.

const TOPIC = `kv:${RESERVATIONS_NS}`;

/** The live entries of `kv:reservations`, read by (re)subscribing. The
 * snapshot follows the subscription's reply — in several frames when large —
 * so a ping answered after it marks where the snapshot has surely ended: one
 * connection's frames keep their order. */
export async function readNamespace(
  client: Client,
  greeting?: Promise<unknown>,
): Promise<KvEntry[]> {
  const entries = new Map<string, KvEntry>();
  let snapshot = false;
  const stop = client.onPushed((p) => {
    if (p.ev !== "topic" || p.topic !== TOPIC) return;
    if (p.snapshot) {
      entries.clear();
      snapshot = true;
    }
    for (const e of (p.data as { entries?: KvEntry[] } | undefined)?.entries ?? []) {
      if ("deleted" in e) entries.delete(e.key);
      else entries.set(e.key, e);
    }
  });
  try {
    const call = client.call("topic_subscribe", { topic: TOPIC });
    if (greeting !== undefined) {
      call.catch(() => {});
      await greeting;
    }
    await call;
    await client.call("instance_ping", {});
    if (!snapshot) throw new ContractError("internal_error", `no snapshot of ${TOPIC} came`);
    return [...entries.values()];
  } finally {
    stop();
  }
}

/** Connect and greet as the person (KV is the person's), pipelined with the
 * first read of the namespace. */
export async function openReservations(
  flags: Flags,
  start = true,
): Promise<{ client: Client; live: KvEntry[]; instance: string }> {
  const client = await connectInstance(flags, { start });
  try {
    const { reply } = await sendGreeting(client, undefined);
    const live = await readNamespace(client, reply);
    return { client, live, instance: (await reply).instance };
  } catch (error) {
    client.close();
    throw error;
  }
}

/** The KV key of `sid`'s reservation of `glob`: one per holder and glob, so
 * reserving again renews. Hashed: a glob may be longer than a key. */
function keyOf(sid: string | null, glob: string): string {
  const digest = Buffer.from(sha256(glob)).toString("base64url").slice(0, 22);
  return `${holderKey(sid)}:${digest}`;
}

/** The path with symlinks resolved as far as it exists (the rest appended):
 * the same file reached two ways is one file. */
export function realAsFarAsExists(path: string): string {
  let head = path;
  const tail: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(head), ...tail.reverse());
    } catch {
      const up = dirname(head);
      if (up === head) return path;
      tail.push(head.slice(up.length).replace(/^\//, ""));
      head = up;
    }
  }
}

/** A glob as reserved: absolute (against `cwd`), symlinks of its literal
 * prefix resolved, and a directory — named as such by a trailing `/` or
 * existing — taken with everything below it. */
export function resolveGlob(glob: string, cwd: string): string {
  if (glob.trim() === "") throw new UsageError("an empty glob reserves nothing");
  let abs = resolve(cwd, glob);
  const isDir = glob.endsWith("/") || (!hasWildcard(abs) && isDirectory(abs));
  const prefix = literalPrefix(abs);
  const real = realAsFarAsExists(prefix);
  if (real !== prefix) abs = join(real, abs.slice(prefix.length));
  if (isDir) abs = `${abs.replace(/\/+$/, "")}/**`;
  if ([...abs].length > GLOB_MAX_LENGTH)
    throw new UsageError(`a glob is at most ${GLOB_MAX_LENGTH} characters: ${glob}`);
  return abs;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** What the JSON output says of a reservation. */
export function row(r: KeyedReservation) {
  return { ...r, holder: { ...r.holder } };
}

/** Put a key back as it was before this command wrote it. */
async function restore(client: Client, key: string, before: KvEntry[]): Promise<void> {
  const old = before.find((e) => e.key === key);
  if (old !== undefined && "value" in old)
    await client.call("kv_write", { ns: RESERVATIONS_NS, key, value: old.value });
  else await client.call("kv_delete", { ns: RESERVATIONS_NS, key });
}

const TAKE_HINT =
  "(wait for it to expire or be released, ask its holder, or take it anyway with --force)";

export function refusal(
  conflicts: KeyedReservation[],
  now: number,
  cwd: string,
  hint = TAKE_HINT,
): ContractError {
  return new ContractError(
    "file_conflict",
    ["already reserved:", ...conflicts.map((r) => `  ${describe(r, now, cwd)}`), hint].join("\n"),
  );
}

/** What a new reservation is: its globs (resolved), for how long, by whom. */
export interface ReserveRequest {
  sid: string | null;
  globs: string[];
  exclusive: boolean;
  ms: number;
  reason?: string;
  force?: boolean;
  /** The directory relative globs were resolved against. */
  cwd: string;
  name?: string;
  repoRoot?: string;
  instance?: string;
}

/**
 * Reserve on a connection greeted as the person, given the namespace as read
 * on it (`before`). Refused (`file_conflict`, nothing written) when another
 * holder's reservation overlaps — any of theirs for an exclusive one, their
 * exclusive ones for a shared one — unless `force`, which takes it anyway and
 * returns the overlaps. Two reserving at once may each have seen the other's
 * ground free: after writing, the namespace is read again, and the later
 * writer (the instance's stamp decides; a tie withdraws both) gives way,
 * putting back what it had before.
 */
export async function takeReservations(
  client: Client,
  before: KvEntry[],
  req: ReserveRequest,
): Promise<{ made: KeyedReservation[]; overridden: KeyedReservation[] }> {
  const { sid, exclusive, cwd } = req;
  const now = Date.now();
  const conflicts = (list: KeyedReservation[]) =>
    uniqueByKey(req.globs.flatMap((glob) => reservationConflicts(list, { sid, glob, exclusive })));
  const seen = conflicts(liveReservations(before, now));
  if (seen.length > 0 && !req.force) throw refusal(seen, now, cwd);
  const made: KeyedReservation[] = [];
  const stamps = await Promise.all(
    req.globs.map((glob) => {
      const value: Reservation = {
        v: 1,
        glob,
        holder: { sid },
        exclusive,
        cwd,
        created_at: now,
        expires_at: now + req.ms,
      };
      if (req.name !== undefined) value.holder.name = req.name;
      if (req.repoRoot !== undefined) value.repo_root = req.repoRoot;
      if (req.instance !== undefined) value.instance = req.instance;
      if (req.reason !== undefined) value.reason = req.reason;
      const key = keyOf(sid, glob);
      made.push({ ...value, key });
      return client.call("kv_write", { ns: RESERVATIONS_NS, key, value }).then((r) => r.updated_at);
    }),
  );
  if (!req.force) {
    const after = await readNamespace(client);
    const stampOf = new Map(after.map((e) => [e.key, e.updated_at]));
    const mine = Math.min(...stamps);
    const raced = conflicts(liveReservations(after, Date.now())).filter(
      (r) => (stampOf.get(r.key) ?? 0) <= mine,
    );
    if (raced.length > 0) {
      await Promise.all(made.map((m) => restore(client, m.key, before)));
      throw refusal(raced, Date.now(), cwd);
    }
  }
  return { made, overridden: seen };
}

/** Release `sid`'s live reservations of `globs` (resolved), or all of them;
 * `not_found` names a glob it does not hold. */
export async function dropReservations(
  client: Client,
  live: KvEntry[],
  sid: string | null,
  globs: Set<string> | "all",
  cwd: string,
): Promise<KeyedReservation[]> {
  const own = liveReservations(live, Date.now()).filter((r) => isOwn(r, sid));
  const chosen = globs === "all" ? own : own.filter((r) => globs.has(r.glob));
  if (globs !== "all") {
    const missing = [...globs].filter((g) => !chosen.some((r) => r.glob === g));
    if (missing.length > 0)
      throw new ContractError(
        "not_found",
        `no reservation of ${sid === null ? "the person" : `session ${sid}`} holds ${missing.map((g) => shown(g, cwd)).join(", ")}`,
      );
  }
  await Promise.all(
    chosen.map((r) => client.call("kv_delete", { ns: RESERVATIONS_NS, key: r.key })),
  );
  return chosen;
}

/** A reservation's duration from its text, or the refusal that explains it. */
export function durationOf(text: string, option: string): number {
  const ms = parseDuration(text);
  if (ms === undefined)
    throw new UsageError(
      `${option}: not a duration: ${text} (like 90s, 30m, 2h, 1h30m; more than 0, at most 30d)`,
    );
  return ms;
}

/** Refuse a reason longer than a reservation keeps. */
export function checkReason(reason: string | undefined, option: string): void {
  if (reason !== undefined && [...reason].length > REASON_MAX_LENGTH)
    throw new UsageError(`${option}: at most ${REASON_MAX_LENGTH} characters`);
}

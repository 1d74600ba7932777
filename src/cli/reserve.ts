import { createHash } from "node:crypto";
import { realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { Client } from "../client/client.js";
import { ContractError } from "../contract/errors.js";
import type { KvEntry } from "../contract/kv.js";
import {
  editConflicts,
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
import { configFile } from "../paths.js";
import { connectInstance, sendGreeting } from "./connect.js";
import type { Command } from "./main.js";
import { type Flags, parse, print, sessionId, UsageError } from "./options.js";
import { hookSid, payloadString, readStdinJson } from "./stdin.js";

// File reservations between agents (DR-0041): `ccmsg reserve`, `release`,
// `reservations` and the PreToolUse hook `reservations check --hook`. Each is
// a KV client (namespace `reservations`): the store is the person's, so the
// CLI greets as the person and names the holding session inside the value.

const TOPIC = `kv:${RESERVATIONS_NS}`;
/** The hook answers within this, or allows the edit in silence. */
const HOOK_DEADLINE_MS = 2000;
const STDIN_DEADLINE_MS = 1000;
/** The tools whose input names a file they change (Claude Code). */
const EDIT_TOOLS = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"]);

/** The live entries of `kv:reservations`, read by (re)subscribing. The
 * snapshot follows the subscription's reply — in several frames when large —
 * so a ping answered after it marks where the snapshot has surely ended: one
 * connection's frames keep their order. */
async function readNamespace(client: Client, greeting?: Promise<unknown>): Promise<KvEntry[]> {
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
async function open(
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

/** Who a command (not the hook) acts for: the session, or null for the
 * person; a `--sid` that is no session id is refused. */
async function holderOf(flags: Flags): Promise<string | null> {
  const sid = sessionId(flags);
  if (sid === undefined) return null;
  // Loaded here, not by the hook: the identifiers bring the schema library.
  const { SID_PATTERN } = await import("../contract/identifiers.js");
  if (!new RegExp(SID_PATTERN).test(sid)) throw new UsageError(`not a session id: ${sid}`);
  return sid;
}

/** The KV key of `sid`'s reservation of `glob`: one per holder and glob, so
 * reserving again renews. Hashed: a glob may be longer than a key. */
function keyOf(sid: string | null, glob: string): string {
  const digest = createHash("sha256").update(glob).digest("base64url").slice(0, 22);
  return `${holderKey(sid)}:${digest}`;
}

/** The path with symlinks resolved as far as it exists (the rest appended):
 * the same file reached two ways is one file. */
function realAsFarAsExists(path: string): string {
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
function resolveGlob(glob: string, cwd: string): string {
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

/** A glob for people to read: relative to `cwd` when below it (absolute
 * without one). */
function shown(glob: string, cwd: string | undefined): string {
  if (cwd === undefined) return glob;
  const rel = relative(cwd, glob);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : glob;
}

function holderText(r: Reservation): string {
  const who = r.holder.sid === null ? "the person" : `session ${r.holder.sid}`;
  return r.holder.name === undefined ? who : `${r.holder.name} (${who})`;
}

function untilText(at: number, now: number): string {
  const secs = Math.max(1, Math.round((at - now) / 1000));
  const left =
    secs < 90
      ? `${secs} s`
      : secs < 5400
        ? `${Math.round(secs / 60)} min`
        : `${Math.round(secs / 3600)} h`;
  return `${new Date(at).toISOString()} (in ${left})`;
}

/** One line per reservation: its glob, holder, kind, expiry and reason. */
function describe(r: Reservation, now: number, cwd?: string): string {
  const kind = r.exclusive ? "exclusive" : "shared";
  const why = r.reason === undefined ? "" : ` — ${r.reason}`;
  return `${shown(r.glob, cwd)}: ${kind}, held by ${holderText(r)} until ${untilText(r.expires_at, now)}${why}`;
}

/** What the JSON output says of a reservation. */
function row(r: KeyedReservation) {
  return { ...r, holder: { ...r.holder } };
}

const RESERVE_USAGE = "ccmsg reserve <glob…> --for <duration> [--reason r] [--shared] [--force]";

/**
 * `ccmsg reserve <glob…> --for 30m` — reserve paths for this session (or the
 * person). Refused (`file_conflict`, nothing written) when another holder's
 * reservation overlaps — any of theirs for an exclusive one, their exclusive
 * ones for `--shared` — unless `--force`, which takes it anyway and says so.
 */
export const reserve: Command = async (argv) => {
  const { values, positionals } = parse(
    argv,
    {
      for: { type: "string" },
      reason: { type: "string" },
      shared: { type: "boolean" },
      force: { type: "boolean" },
    },
    RESERVE_USAGE,
  );
  if (positionals.length === 0) throw new UsageError(`name what to reserve: ${RESERVE_USAGE}`);
  if (values.for === undefined)
    throw new UsageError(`say for how long: --for 30m (${RESERVE_USAGE})`);
  const ms = parseDuration(values.for);
  if (ms === undefined)
    throw new UsageError(
      `--for: not a duration: ${values.for} (like 90s, 30m, 2h, 1h30m; more than 0, at most 30d)`,
    );
  if (values.reason !== undefined && [...values.reason].length > REASON_MAX_LENGTH)
    throw new UsageError(`--reason: at most ${REASON_MAX_LENGTH} characters`);
  const cwd = process.cwd();
  const globs = [...new Set(positionals.map((g) => resolveGlob(g, cwd)))];
  const sid = await holderOf(values);
  // Loaded here only: the hook below stays clear of git and its helpers.
  const { derivedMeta, sessionCwd } = await import("./session-meta.js");
  const meta = sid === null ? undefined : await derivedMeta(sessionCwd());
  const exclusive = !values.shared;
  const { client, live: before, instance } = await open(values);
  try {
    const now = Date.now();
    const liveBefore = liveReservations(before, now);
    const conflicts = (list: KeyedReservation[]) =>
      uniqueByKey(globs.flatMap((glob) => reservationConflicts(list, { sid, glob, exclusive })));
    const seen = conflicts(liveBefore);
    if (seen.length > 0 && !values.force) throw refusal(seen, now, cwd);
    const made: KeyedReservation[] = [];
    const stamps = await Promise.all(
      globs.map((glob) => {
        const value: Reservation = {
          v: 1,
          glob,
          holder: { sid },
          exclusive,
          cwd,
          instance,
          created_at: now,
          expires_at: now + ms,
        };
        const name = meta?.ws ?? meta?.branch;
        if (name !== undefined) value.holder.name = name;
        if (meta?.repo_root !== undefined) value.repo_root = meta.repo_root;
        if (values.reason !== undefined) value.reason = values.reason;
        const key = keyOf(sid, glob);
        made.push({ ...value, key });
        return client
          .call("kv_write", { ns: RESERVATIONS_NS, key, value })
          .then((r) => r.updated_at);
      }),
    );
    if (!values.force) {
      // Two reserving at once may each have seen the other's ground free:
      // read again, and the later writer (the instance's stamp decides; a tie
      // withdraws both) gives way, putting back what it had before.
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
    print(values, { reserved: made.map(row), overridden: seen.map(row) }, () =>
      [
        ...made.map((r) => `reserved ${describe(r, now, cwd)}`),
        ...seen.map((r) => `warning: overlaps ${describe(r, now, cwd)}`),
      ].join("\n"),
    );
  } finally {
    client.close();
  }
};

function uniqueByKey(list: KeyedReservation[]): KeyedReservation[] {
  return [...new Map(list.map((r) => [r.key, r])).values()];
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

function refusal(
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

const RELEASE_USAGE = "ccmsg release <glob…> | --all";

/** `ccmsg release <glob…>` / `--all` — give back this holder's reservations. */
export const release: Command = async (argv) => {
  const { values, positionals } = parse(argv, { all: { type: "boolean" } }, RELEASE_USAGE);
  if ((positionals.length === 0) === !values.all)
    throw new UsageError(`name globs or pass --all (not both): ${RELEASE_USAGE}`);
  const cwd = process.cwd();
  const sid = await holderOf(values);
  const globs = new Set(positionals.map((g) => resolveGlob(g, cwd)));
  const { client, live } = await open(values);
  try {
    const own = liveReservations(live, Date.now()).filter((r) => isOwn(r, sid));
    const chosen = values.all ? own : own.filter((r) => globs.has(r.glob));
    if (!values.all) {
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
    print(values, { released: chosen.map(row) }, () =>
      chosen.length === 0
        ? "nothing to release"
        : chosen.map((r) => `released ${shown(r.glob, cwd)}`).join("\n"),
    );
  } finally {
    client.close();
  }
};

const RESERVATIONS_USAGE = "ccmsg reservations [check <path>… | check --hook]";

/** `ccmsg reservations` — the live ones; `reservations check` — whether
 * editing paths would step into another holder's reservation. */
export const reservations: Command = async (argv) => {
  const { values, positionals } = parse(argv, { hook: { type: "boolean" } }, RESERVATIONS_USAGE);
  const [sub, ...paths] = positionals;
  if (sub === "check") {
    if (values.hook) return checkHook(values);
    return check(values, paths);
  }
  if (sub !== undefined || values.hook) throw new UsageError(`usage: ${RESERVATIONS_USAGE}`);
  const { client, live } = await open(values);
  client.close();
  const now = Date.now();
  const list = liveReservations(live, now);
  const cwd = process.cwd();
  print(values, { reservations: list.map(row) }, () =>
    list.length === 0 ? "no live reservations" : list.map((r) => describe(r, now, cwd)).join("\n"),
  );
};

/** What an edit of `path` by `sid` would step into. */
function conflictsOfEdit(live: KvEntry[], sid: string | null, path: string, now: number) {
  const list = liveReservations(live, now);
  // The path as given and with its symlinks resolved: either may be the
  // spelling a reservation used.
  const real = realAsFarAsExists(path);
  return uniqueByKey([
    ...editConflicts(list, sid, path),
    ...(real === path ? [] : editConflicts(list, sid, real)),
  ]).sort((a, b) => Number(b.exclusive) - Number(a.exclusive));
}

async function check(values: Flags, paths: string[]): Promise<void> {
  if (paths.length === 0) throw new UsageError(`name a path: ${RESERVATIONS_USAGE}`);
  const sid = await holderOf(values);
  const cwd = process.cwd();
  const { client, live } = await open(values);
  client.close();
  const now = Date.now();
  const found = paths.map((p) => {
    const path = resolve(cwd, p);
    return { path, conflicts: conflictsOfEdit(live, sid, path, now) };
  });
  const held = found.flatMap((f) => f.conflicts.filter((r) => r.exclusive));
  if (held.length > 0)
    throw refusal(uniqueByKey(held), now, cwd, "(ask its holder before editing there)");
  print(
    values,
    { paths: found.map((f) => ({ path: f.path, conflicts: f.conflicts.map(row) })) },
    () =>
      found
        .map((f) =>
          f.conflicts.length === 0
            ? `${shown(f.path, cwd)}: free`
            : `${shown(f.path, cwd)}: free to edit, also reserved (shared) — ${f.conflicts.map((r) => describe(r, now, cwd)).join("; ")}`,
        )
        .join("\n"),
  );
}

/**
 * `ccmsg reservations check --hook` — Claude Code's PreToolUse hook on
 * Edit|Write|MultiEdit|NotebookEdit. An edit inside another holder's exclusive
 * reservation is denied with the reason (config `reservations.on_conflict:
 * "block"`) or let through with the reason in the model's context ("warn",
 * the default); inside a shared one it is only pointed out. Never fails the
 * session: no instance, a slow one or any error allows the edit in silence.
 */
async function checkHook(flags: Flags): Promise<void> {
  const allow = () => process.exit(0);
  setTimeout(allow, HOOK_DEADLINE_MS).unref();
  try {
    const payload = await readStdinJson(STDIN_DEADLINE_MS);
    const tool = payloadString(payload, "tool_name");
    const input = payload.tool_input as Record<string, unknown> | undefined;
    if (tool === undefined || !EDIT_TOOLS.has(tool) || typeof input !== "object" || input === null)
      return allow();
    const target = payloadString(input, "file_path") ?? payloadString(input, "notebook_path");
    if (target === undefined) return allow();
    const path = resolve(payloadString(payload, "cwd") ?? process.cwd(), target);
    const sid = hookSid(flags, payload) ?? null;
    // The config's checker loads beside the round trip, not before it.
    const config = import("../config.js").then((m) => m.loadConfig(configFile(undefined)));
    const { client, live } = await open(flags, false);
    client.close();
    const block = (await config).reservations?.on_conflict === "block";
    const now = Date.now();
    const found = conflictsOfEdit(live, sid, path, now);
    if (found.length === 0) return allow();
    const exclusive = found.some((r) => r.exclusive);
    const where = sep === "/" ? path : path.replaceAll(sep, "/");
    const lines = found.map((r) => `- ${describe(r, now)}`);
    const out =
      exclusive && block
        ? {
            hookSpecificOutput: {
              hookEventName: "PreToolUse",
              permissionDecision: "deny",
              permissionDecisionReason: [
                `ccmsg: ${where} is reserved by another agent, so this edit was blocked:`,
                ...lines,
                "Edit something else, or ask the holder (ccmsg post <sid> …) to release it.",
              ].join("\n"),
            },
          }
        : {
            hookSpecificOutput: {
              hookEventName: "PreToolUse",
              additionalContext: [
                exclusive
                  ? `ccmsg warning: ${where} is reserved by another agent; your edit may collide with theirs:`
                  : `ccmsg note: ${where} is also reserved (shared) by another agent:`,
                ...lines,
              ].join("\n"),
            },
          };
    process.stdout.write(`${JSON.stringify(out)}\n`, () => allow());
  } catch {
    allow();
  }
}

import { resolve } from "node:path";
import { editHookAnswer } from "../client/edit-hook-answer.js";
import { type Flags, sessionId, UsageError } from "../client/flags.js";
import {
  checkReason,
  describe,
  dropReservations,
  durationOf,
  openReservations,
  realAsFarAsExists,
  refusal,
  resolveGlob,
  row,
  shown,
  takeReservations,
  uniqueByKey,
} from "../client/reservations.js";
import { liveReservations } from "../contract/reservations.js";
import { conflictsOfEdit } from "../harness/edit-answer.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";
import { readStdinJson } from "./stdin.js";

// File reservations between agents (DR-0041): `ccmsg reserve`, `release`,
// `reservations` and the PreToolUse hook `reservations check --hook`, over
// KV namespace `reservations` (reservation-kv.ts).

/** The hook answers within this, or allows the edit in silence. */
const HOOK_DEADLINE_MS = 2000;
const STDIN_DEADLINE_MS = 1000;

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

const RESERVE_USAGE = "ccmsg reserve <glob…> --for <duration> [--reason r] [--shared] [--force]";

/**
 * `ccmsg reserve <glob…> --for 30m` — reserve paths for this session (or the
 * person); refused when another holder's overlaps (see takeReservations).
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
  const ms = durationOf(values.for, "--for");
  checkReason(values.reason, "--reason");
  const cwd = process.cwd();
  const globs = [...new Set(positionals.map((g) => resolveGlob(g, cwd)))];
  const sid = await holderOf(values);
  // Loaded here only: the hook below stays clear of git and its helpers.
  const { derivedMeta, sessionCwd } = await import("../client/session-meta.js");
  const meta = sid === null ? undefined : await derivedMeta(sessionCwd());
  const { client, live, instance } = await openReservations(values);
  try {
    const name = meta?.ws ?? meta?.branch;
    const { made, overridden } = await takeReservations(client, live, {
      ...{ sid, globs, exclusive: !values.shared, ms, cwd, instance, force: values.force },
      ...(values.reason === undefined ? {} : { reason: values.reason }),
      ...(name === undefined ? {} : { name }),
      ...(meta?.repo_root === undefined ? {} : { repoRoot: meta.repo_root }),
    });
    const now = Date.now();
    print(values, { reserved: made.map(row), overridden: overridden.map(row) }, () =>
      [
        ...made.map((r) => `reserved ${describe(r, now, cwd)}`),
        ...overridden.map((r) => `warning: overlaps ${describe(r, now, cwd)}`),
      ].join("\n"),
    );
  } finally {
    client.close();
  }
};

const RELEASE_USAGE = "ccmsg release <glob…> | --all";

/** `ccmsg release <glob…>` / `--all` — give back this holder's reservations. */
export const release: Command = async (argv) => {
  const { values, positionals } = parse(argv, { all: { type: "boolean" } }, RELEASE_USAGE);
  if ((positionals.length === 0) === !values.all)
    throw new UsageError(`name globs or pass --all (not both): ${RELEASE_USAGE}`);
  const cwd = process.cwd();
  const sid = await holderOf(values);
  const globs = values.all ? "all" : new Set(positionals.map((g) => resolveGlob(g, cwd)));
  const { client, live } = await openReservations(values);
  try {
    const chosen = await dropReservations(client, live, sid, globs, cwd);
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
  const { client, live } = await openReservations(values);
  client.close();
  const now = Date.now();
  const list = liveReservations(live, now);
  const cwd = process.cwd();
  print(values, { reservations: list.map(row) }, () =>
    list.length === 0 ? "no live reservations" : list.map((r) => describe(r, now, cwd)).join("\n"),
  );
};

/** What an edit of `path` by `sid` would step into. */
async function check(values: Flags, paths: string[]): Promise<void> {
  if (paths.length === 0) throw new UsageError(`name a path: ${RESERVATIONS_USAGE}`);
  const sid = await holderOf(values);
  const cwd = process.cwd();
  const { client, live } = await openReservations(values);
  client.close();
  const now = Date.now();
  const found = paths.map((p) => {
    const path = resolve(cwd, p);
    return { path, conflicts: conflictsOfEdit(live, sid, path, realAsFarAsExists(path), now) };
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
    const out = await editHookAnswer(flags, payload, process.cwd());
    if (out === undefined) return allow();
    process.stdout.write(`${JSON.stringify(out)}\n`, () => allow());
  } catch {
    allow();
  }
}

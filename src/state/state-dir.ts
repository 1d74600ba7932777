import { chmodSync, lstatSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { contractError } from "../contract/errors.js";
import { stateFiles } from "./paths.js";

/**
 * The state directory holds the inbox, the owner credential and the local
 * socket: only its owner may enter it. Created 0700; an existing directory is
 * tightened to 0700 (it may predate this rule, or have been made by hand);
 * a shared directory such as /tmp is refused rather than closed.
 */
export function ensureStateDir(stateDir: string): void {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  // A shared directory (sticky, like /tmp) is not ours to close.
  if ((lstatSync(stateDir).mode & 0o1000) !== 0)
    throw contractError(
      "invalid_args",
      `${stateDir} is a shared directory: give ccmsg one of its own`,
    );
  tighten(stateDir);
}

/**
 * The instance's start: a private state directory, a umask that keeps every
 * file it creates later private (SQLite's `-wal` / `-shm`, the log, files of
 * worker threads), and whatever an older build or a loose umask left readable
 * to others tightened. Symlinks are left alone; nothing is followed.
 */
export function prepareStateDir(stateDir: string): void {
  process.umask(0o077);
  ensureStateDir(stateDir);
  for (const name of readdirSync(stateDir)) tighten(join(stateDir, name));
  const socketDir = dirname(stateFiles(stateDir).socket);
  if (socketDir !== stateDir) ensureSocketDir(socketDir);
}

/** Drop every group and other permission bit, if any is set. */
function tighten(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink() || (stat.mode & 0o077) === 0) return;
  chmodSync(path, stat.mode & 0o700);
}

/**
 * The short socket directory used when `<state dir>/ccmsg.sock` is too long
 * (`<tmp>/ccmsg-<uid>/<key>`): it lives under a shared directory, so it and
 * its parent must be real directories of this user that nobody else may
 * enter — made 0700 (or tightened) here, and refused when another user made
 * them first or a symlink stands in their place.
 */
export function ensureSocketDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const uid = process.getuid?.();
  for (const d of [dirname(dir), dir]) {
    const st = lstatSync(d);
    if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) {
      throw contractError(
        "internal_error",
        `${d} is not a private directory of this user: remove it, or give ccmsg a shorter --state-dir`,
      );
    }
    tighten(d);
  }
}

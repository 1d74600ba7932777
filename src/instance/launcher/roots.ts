import { constants, type Dirent } from "node:fs";
import { open, readdir, readlink, realpath, stat } from "node:fs/promises";
import { isAbsolute, sep } from "node:path";

// The launcher's roots (contract §4.3.5 `root_dirs`) as a boundary: what
// `dir_tree` lists and where `launcher_run` starts must resolve — symlinks and
// `..` followed — to a directory inside one of them. Listing goes through the
// directory actually opened, so a symlink swapped in after the check is never
// followed out of a root.

/** The configured roots that exist, resolved, each once. */
export async function realRoots(roots: readonly string[]): Promise<string[]> {
  const resolved = await Promise.all(roots.map((r) => realpath(r).catch(() => undefined)));
  return [...new Set(resolved.filter((r) => r !== undefined))];
}

/** Whether the resolved `path` is one of the resolved roots or below one. */
export function within(path: string, roots: readonly string[]): boolean {
  return roots.some((r) => path === r || path.startsWith(r === sep ? r : r + sep));
}

/** A directory inside the roots, resolved; or why not, in words. */
export async function containedDirectory(
  path: string,
  roots: readonly string[],
): Promise<{ ok: true; real: string } | { ok: false; why: string }> {
  if (!isAbsolute(path)) return { ok: false, why: `${path} is not an absolute path` };
  let real: string;
  try {
    real = await realpath(path);
    if (!(await stat(real)).isDirectory()) return { ok: false, why: `${path} is not a directory` };
  } catch {
    return { ok: false, why: `${path} does not exist` };
  }
  if (!within(real, roots))
    return {
      ok: false,
      why: `${path} is outside the launcher's roots${real === path ? "" : ` (it resolves to ${real})`}`,
    };
  return { ok: true, real };
}

/**
 * The entries of directory `path` when the directory opened there lies
 * inside the roots; undefined otherwise (or when it cannot be read). The last
 * component is opened without following a symlink, and where /proc is there
 * the check reads where the open descriptor really points and the listing
 * goes through that descriptor: what is listed is what was checked.
 */
export async function listContained(
  path: string,
  roots: readonly string[],
): Promise<Dirent[] | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const fd = `/proc/self/fd/${handle.fd}`;
    const opened = await readlink(fd).catch(() => undefined);
    if (opened !== undefined) {
      if (!within(opened, roots)) return undefined;
      return await readdir(fd, { withFileTypes: true });
    }
    // No /proc: resolve the path itself (the open above still refused a
    // symlink at its last component).
    if (!within(await realpath(path), roots)) return undefined;
    return await readdir(path, { withFileTypes: true });
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => {});
  }
}

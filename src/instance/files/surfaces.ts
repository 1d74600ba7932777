import { lstat, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, posix, relative } from "node:path";
import type { FileKind } from "../../contract/files.js";
import { resolveExisting } from "../../harness/transcript-files.js";
import { type Identity, inside, isRefusal, type Refusal, refusal } from "./checked-open.js";

// The three surfaces a path is checked against (contract §4.3.4): `contained`
// (relative to the session's root), `workspace` (absolute, inside one of the
// workspace folders its status names), `external` (absolute, exactly one of
// the files its status names). Admission resolves what exists — symlinks,
// `..`, and the case and Unicode form the filesystem itself keeps — and
// compares the resolved path with the resolved root byte for byte: never a
// case-folded or normalized comparison, which would admit a sibling whose
// name merely looks the same.

/** What a session's surfaces are, as the instance knows them now. */
export interface Surfaces {
  /** The session's root: `repo_root`, else `cwd` (contract §6.1). */
  root?: string;
  /** Its workspace folders (`session_status` `workspace_folders`). */
  folders: readonly string[];
  /** Its external files (`session_status` `external_files`). */
  external: readonly string[];
}

/** A path a surface admits. */
export interface Admitted {
  kind: FileKind;
  /** Where it is on disk now: absolute, every existing component resolved
   * (the last one kept as written when the op acts on the entry itself). */
  real: string;
  /** How replies spell it: relative for `contained`, absolute otherwise. */
  shown: string;
  /** The resolved root of the surface it lies in (the file itself for an
   * external one). */
  base: string;
  /** An external file as the admission saw it: the descriptor must be it. */
  identity?: Identity;
}

/** `follow`: resolve the whole path (reads, edits, listings). `entry`: the
 * last component is the entry acted on and is never resolved (create,
 * delete): deleting a symlink's name must not delete its target. */
export type Final = "follow" | "entry";

/** A relative path made canonical (`""` is the root), or undefined when it
 * is absolute, climbs out, or holds a NUL. */
export function normalizeRelative(path: string): string | undefined {
  if (path.includes("\0") || isAbsolute(path)) return undefined;
  const n = posix.normalize(path === "" ? "." : path);
  if (n === ".." || n.startsWith("../")) return undefined;
  const trimmed = n.endsWith("/") ? n.slice(0, -1) : n;
  return trimmed === "." ? "" : trimmed;
}

/** An absolute path made canonical (no `.`/`..`, no trailing separator), or
 * undefined when it is not absolute or holds a NUL. */
export function normalizeAbsolute(path: string): string | undefined {
  if (path.includes("\0") || !isAbsolute(path)) return undefined;
  const n = posix.normalize(path);
  return n.length > 1 && n.endsWith("/") ? n.slice(0, -1) : n;
}

async function realOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch {
    return undefined;
  }
}

/** Resolve `path` (absolute, canonical) by `final`. */
async function resolveBy(path: string, final: Final): Promise<string> {
  if (final === "follow" || path === "/") return resolveExisting(path);
  const parent = await resolveExisting(dirname(path));
  return parent === "/" ? `/${basename(path)}` : `${parent}/${basename(path)}`;
}

const outside = (path: string, why: string) => refusal("outside", `${path || "the root"} ${why}`);

async function admitContained(
  s: Surfaces,
  path: string,
  final: Final,
): Promise<Admitted | Refusal> {
  const rel = normalizeRelative(path);
  if (rel === undefined)
    return outside(path, "is not a path inside the session's root (relative, no `..` out)");
  if (s.root === undefined) return outside(path, "names no root: the session has none known");
  const root = await realOrUndefined(s.root);
  if (root === undefined) return outside(path, "is unreachable: the session's root is gone");
  const real = rel === "" ? root : await resolveBy(`${root === "/" ? "" : root}/${rel}`, final);
  if (!inside(real, root)) return outside(path, "leads outside the session's root");
  if (final === "entry" && real === root) return outside(path, "is the root itself");
  return { kind: "contained", real, shown: rel, base: root };
}

async function admitWorkspace(
  s: Surfaces,
  path: string,
  final: Final,
): Promise<Admitted | Refusal> {
  const abs = normalizeAbsolute(path);
  if (abs === undefined) return outside(path, "is not an absolute path");
  const real = await resolveBy(abs, final);
  for (const folder of s.folders) {
    const base = await realOrUndefined(folder);
    if (base === undefined || !inside(real, base)) continue;
    if (final === "entry" && real === base) return outside(path, "is a workspace folder itself");
    return { kind: "workspace", real, shown: abs, base };
  }
  return outside(path, "is inside none of the session's workspace folders");
}

async function admitExternal(s: Surfaces, path: string): Promise<Admitted | Refusal> {
  const abs = normalizeAbsolute(path);
  if (abs === undefined || !s.external.some((f) => normalizeAbsolute(f) === abs))
    return outside(path, "is not one of the session's external files");
  // Admitted as itself: a symlink in its place is not the file the session
  // touched, so its final component is never followed.
  let st: Awaited<ReturnType<typeof lstat>>;
  try {
    st = await lstat(abs);
  } catch {
    return refusal("missing", `nothing at ${abs}`);
  }
  if (st.isSymbolicLink())
    return outside(path, "is a symlink; external files are read as themselves");
  const real = await realOrUndefined(abs);
  if (real === undefined) return refusal("missing", `nothing at ${abs}`);
  return { kind: "external", real, shown: abs, base: real, identity: { dev: st.dev, ino: st.ino } };
}

/** Check `path` against the surface `kind` of a session. `path` undefined
 * is the surface's root (contained only: the workspace surface has many). */
export function admit(
  kind: FileKind,
  s: Surfaces,
  path: string | undefined,
  final: Final = "follow",
): Promise<Admitted | Refusal> {
  switch (kind) {
    case "contained":
      return admitContained(s, path ?? "", final);
    case "workspace":
      if (path === undefined)
        return Promise.resolve(outside("", "is not a folder: name one of the workspace folders"));
      return admitWorkspace(s, path, final);
    case "external":
      return admitExternal(s, path ?? "");
  }
}

/** The first surface that admits an absolute path as a regular file with no
 * other names (contract `file_stat_batch`), spelled for `file_read`; any
 * miss is undefined, whatever the reason (no existence oracle). */
export async function admitAsFile(s: Surfaces, path: string): Promise<Admitted | undefined> {
  const abs = normalizeAbsolute(path);
  if (abs === undefined) return undefined;
  const tries: (() => Promise<Admitted | Refusal | undefined>)[] = [
    async () => {
      const root = s.root === undefined ? undefined : await realOrUndefined(s.root);
      if (root === undefined) return undefined;
      const real = await resolveExisting(abs);
      if (!inside(real, root)) return undefined;
      return { kind: "contained", real, shown: relative(root, real), base: root };
    },
    () => admitWorkspace(s, abs, "follow"),
    () => admitExternal(s, abs),
  ];
  for (const attempt of tries) {
    const a = await attempt();
    if (a === undefined || isRefusal(a)) continue;
    try {
      const st = await lstat(a.real);
      if (!st.isFile() || st.nlink > 1) continue;
      if (a.identity !== undefined && (st.dev !== a.identity.dev || st.ino !== a.identity.ino))
        continue;
      return a;
    } catch {}
  }
  return undefined;
}

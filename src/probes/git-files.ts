import { readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";

// What `git rev-parse --show-toplevel --git-common-dir --symbolic-full-name
// HEAD` and `git remote get-url origin` would say, read from the repository's
// files instead of two git processes (~20 ms of a cold `ccmsg post`). Only
// the plain layouts are read: a `.git` directory, or a `.git` file naming its
// git dir (linked worktrees). Anything that could make git answer otherwise —
// its environment variables, includes, URL rewriting, another owner
// (safe.directory), a reftable, a config'd worktree (submodules), a bare
// repository — leaves the answer to git: `undefined` here means "ask git";
// `null`, in no repository.

export interface GitLayout {
  /** The worktree's top level, symlinks resolved (as git prints it). */
  toplevel: string;
  /** The repository's common git dir (git itself may print it relative to cwd). */
  commonDir: string;
  /** `refs/heads/<name>` when HEAD names a branch that exists; null when
   * detached or before the first commit. */
  head: string | null;
  /** `origin`'s first URL; null when there is none. */
  originUrl: string | null;
}

/** Environment variables that change where git looks or what it reads. */
const GIT_ENV = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_COMMON_DIR",
  "GIT_CEILING_DIRECTORIES",
  "GIT_DISCOVERY_ACROSS_FILESYSTEM",
  "GIT_CONFIG",
  "GIT_CONFIG_GLOBAL",
  "GIT_CONFIG_SYSTEM",
  "GIT_CONFIG_COUNT",
  "GIT_CONFIG_PARAMETERS",
];

/** Config that can change these answers, in any config file git reads. */
const CONFIG_GIT_DECIDES =
  /^\s*\[\s*include|insteadof|^\s*worktree\s*=|refstorage|worktreeconfig|^\s*bare\s*=\s*true/im;

export function gitLayout(
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): GitLayout | null | undefined {
  if (GIT_ENV.some((name) => env[name] !== undefined)) return undefined;
  try {
    const found = findDotGit(realpathSync(cwd));
    if (found === undefined || found === null) return found;
    const { toplevel, dotGit } = found;
    const gitDir = dotGit.isDirectory ? dotGit.path : linkedGitDir(dotGit.path);
    if (gitDir === undefined) return undefined;
    const common = readOptional(join(gitDir, "commondir"));
    const commonDir = realpathSync(common === null ? gitDir : resolve(gitDir, common.trim()));
    const config = readOptional(join(commonDir, "config")) ?? "";
    if (CONFIG_GIT_DECIDES.test(config) || globalConfigDecides(env)) return undefined;
    const head = headRef(gitDir, commonDir);
    if (head === undefined) return undefined;
    const originUrl = remoteUrl(config, "origin");
    if (originUrl === undefined) return undefined;
    return { toplevel, commonDir, head, originUrl };
  } catch {
    return undefined;
  }
}

/** The nearest `.git` at or above `dir`, on the same filesystem and owned by
 * this user (git refuses another owner's repository unless told it is safe);
 * null when there is none up to `/` and no directory on the way is a git dir
 * itself (a bare repository, or inside `.git`). */
function findDotGit(
  dir: string,
): { toplevel: string; dotGit: { path: string; isDirectory: boolean } } | null | undefined {
  const device = statSync(dir).dev;
  const uid = process.getuid?.();
  for (let at = dir; ; at = dirname(at)) {
    const path = join(at, ".git");
    const st = statSync(path, { throwIfNoEntry: false });
    if (st !== undefined) {
      if (uid !== undefined && st.uid !== uid) return undefined;
      if (!st.isDirectory() && !st.isFile()) return undefined;
      return { toplevel: at, dotGit: { path, isDirectory: st.isDirectory() } };
    }
    if (looksLikeGitDir(at)) return undefined;
    if (dirname(at) === at) return null;
    if (statSync(dirname(at)).dev !== device) return undefined;
  }
}

/** What git takes for a git dir: HEAD beside objects/ and refs/. */
function looksLikeGitDir(dir: string): boolean {
  return ["HEAD", "objects", "refs"].every((name) =>
    statSync(join(dir, name), { throwIfNoEntry: false }),
  );
}

/** The git dir a `.git` file names (`gitdir: <path>`, relative to the file). */
function linkedGitDir(dotGitFile: string): string | undefined {
  const m = /^gitdir: (.+)\n?$/.exec(readFileSync(dotGitFile, "utf8"));
  if (m === null) return undefined;
  const path = m[1]!;
  return isAbsolute(path) ? path : resolve(dirname(dotGitFile), path);
}

function globalConfigDecides(env: NodeJS.ProcessEnv): boolean {
  const home = env.HOME ?? homedir();
  const xdg = env.XDG_CONFIG_HOME ?? join(home, ".config");
  return [join(xdg, "git", "config"), join(home, ".gitconfig"), "/etc/gitconfig"].some((f) =>
    CONFIG_GIT_DECIDES.test(readOptional(f) ?? ""),
  );
}

/** HEAD as `--symbolic-full-name` prints it: the branch's full ref when it
 * exists (loose or packed), null when detached or unborn; undefined for a
 * HEAD this reader does not know. */
function headRef(gitDir: string, commonDir: string): string | null | undefined {
  const head = readFileSync(join(gitDir, "HEAD"), "utf8").trim();
  if (/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(head)) return null;
  const m = /^ref: (refs\/heads\/\S+)$/.exec(head);
  if (m === null) return undefined;
  const ref = m[1]!;
  if (statSync(join(commonDir, ref), { throwIfNoEntry: false })?.isFile()) return ref;
  const packed = readOptional(join(commonDir, "packed-refs")) ?? "";
  return packed.split("\n").some((line) => line.endsWith(` ${ref}`)) ? ref : null;
}

/** The first `url` of `[remote "<name>"]`; null when there is none;
 * undefined for a value written with quotes, escapes or a comment. */
function remoteUrl(config: string, name: string): string | null | undefined {
  let inRemote = false;
  for (const line of config.split("\n")) {
    const section = /^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"([^"]*)")?\s*\]\s*$/.exec(line);
    if (section !== null) {
      const kind = section[1]!.toLowerCase();
      if (kind.startsWith("remote.")) return undefined;
      inRemote = kind === "remote" && section[2] === name;
      continue;
    }
    if (/^\s*\[/.test(line)) return undefined;
    if (!inRemote) continue;
    const kv = /^\s*url\s*=\s*(.*?)\s*$/i.exec(line);
    if (kv === null) continue;
    const value = kv[1]!;
    return /["\\#;]/.test(value) || value === "" ? undefined : value;
  }
  return null;
}

function readOptional(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

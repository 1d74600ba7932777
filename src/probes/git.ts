import { existsSync } from "node:fs";
import { lstat } from "node:fs/promises";
import { type RunOptions, type RunResult, run } from "./exec.js";
import { mainWorktree, repoSlug } from "./repo-names.js";

// What git says about a session's worktree: where it is, its branch, its
// origin, whether it is dirty or mid-merge, and the repository's other
// worktrees. Every call runs with `--no-optional-locks`, so a HUD refresh never
// takes the index lock away from the session's own git commands.

export interface Worktree {
  path: string;
  branch: string | null;
  bare: boolean;
}

export interface GitFacts {
  state: "ok";
  /** The worktree's top level. */
  toplevel: string;
  /** The repository's main worktree (where `.git` lives). */
  mainRoot: string;
  /** Checked-out branch; null on a detached HEAD. */
  branch: string | null;
  /** The commit checked out; null before the first commit (or when status
   * failed). */
  head: string | null;
  remoteUrl: string | null;
  /** `owner/name` of `origin`, when its URL names one. */
  repoSlug: string | null;
  /** Anything `git status --porcelain` lists (changes or untracked files);
   * null when status itself failed — unknown, never "clean". */
  dirty: boolean | null;
  /** Paths with merge conflicts; null when status failed. */
  unmergedPaths: string[] | null;
  worktrees: Worktree[];
}

export type GitUnavailable = "not-installed" | "not-a-repo" | "no-directory" | "timeout";
export type GitProbe = GitFacts | { state: GitUnavailable };

/** The sentence a person reads when git cannot answer (the HUD's blocked
 * reasons and the commands' refusals use the same words). */
export function gitUnavailableReason(state: GitUnavailable, cwd: string): string {
  switch (state) {
    case "not-installed":
      return "git not installed";
    case "not-a-repo":
      return "not in a git repository";
    case "no-directory":
      return `worktree ${cwd} no longer exists`;
    case "timeout":
      return "git did not answer in time";
  }
}

export function git(cwd: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  return run("git", ["--no-optional-locks", "-C", cwd, ...args], options);
}

/** Everything the HUD needs from git for one directory, in parallel calls. */
export async function probeGit(cwd: string, options: RunOptions = {}): Promise<GitProbe> {
  if (!existsSync(cwd)) return { state: "no-directory" };
  const [top, status, remote, worktrees] = await Promise.all([
    git(cwd, ["rev-parse", "--show-toplevel", "--git-common-dir"], options),
    git(cwd, ["status", "--porcelain=v2", "--branch"], options),
    git(cwd, ["remote", "get-url", "origin"], options),
    git(cwd, ["worktree", "list", "--porcelain"], options),
  ]);
  if (top.failure === "missing") return { state: "not-installed" };
  if (top.failure === "timeout") return { state: "timeout" };
  const [toplevel, common] = top.stdout.trim().split("\n");
  if (!top.ok || !toplevel || !common) return { state: "not-a-repo" };
  const parsed = status.ok ? parseStatus(status.stdout) : undefined;
  const url = remote.ok ? remote.stdout.trim() || null : null;
  return {
    state: "ok",
    toplevel,
    mainRoot: mainWorktree(cwd, toplevel, common),
    branch: parsed?.branch ?? null,
    head: parsed?.head ?? null,
    remoteUrl: url,
    repoSlug: url === null ? null : repoSlug(url),
    dirty: parsed?.dirty ?? null,
    unmergedPaths: parsed?.unmerged ?? null,
    worktrees: worktrees.ok ? parseWorktrees(worktrees.stdout) : [],
  };
}

/** Branch, dirtiness and conflicted paths from `git status --porcelain=v2 --branch`. */
export function parseStatus(out: string): {
  branch: string | null;
  head: string | null;
  dirty: boolean;
  unmerged: string[];
} {
  let branch: string | null = null;
  let head: string | null = null;
  let dirty = false;
  const unmerged: string[] = [];
  for (const line of out.split("\n")) {
    if (line.startsWith("# branch.oid ")) {
      const oid = line.slice("# branch.oid ".length).trim();
      head = /^[0-9a-f]{7,64}$/.test(oid) ? oid : null; // "(initial)" before a commit
    } else if (line.startsWith("# branch.head ")) {
      const head = line.slice("# branch.head ".length);
      branch = head === "(detached)" ? null : head;
    } else if (line.startsWith("u ")) {
      dirty = true;
      // `u XY sub m1 m2 m3 mW h1 h2 h3 <path>`: the path is the 11th field.
      const path = line.split(" ").slice(10).join(" ");
      if (path !== "") unmerged.push(path);
    } else if (/^[12?] /.test(line)) {
      dirty = true;
    }
  }
  return { branch, head, dirty, unmerged };
}

/** `git worktree list --porcelain`: blocks separated by blank lines. */
export function parseWorktrees(out: string): Worktree[] {
  const list: Worktree[] = [];
  let current: Worktree | undefined;
  for (const line of out.split("\n")) {
    if (line.startsWith("worktree ")) {
      current = { path: line.slice("worktree ".length), branch: null, bare: false };
      list.push(current);
    } else if (current !== undefined && line.startsWith("branch ")) {
      current.branch = line.slice("branch ".length).replace(/^refs\/heads\//, "");
    } else if (current !== undefined && line === "bare") {
      current.bare = true;
    }
  }
  return list;
}

/** The top level of `cwd`'s worktree and the repository's main worktree;
 * undefined when `cwd` is in no repository (or git cannot say). */
export async function worktreeRoots(
  cwd: string,
  options: RunOptions = {},
): Promise<{ toplevel: string; mainRoot: string } | undefined> {
  const top = await git(cwd, ["rev-parse", "--show-toplevel", "--git-common-dir"], options);
  const [toplevel, common] = top.stdout.trim().split("\n");
  if (!top.ok || !toplevel || !common) return undefined;
  return { toplevel, mainRoot: mainWorktree(cwd, toplevel, common) };
}

/** Where a new worktree on branch `name` goes: beside the repository's main
 * worktree as `<main>-<name>`, slashes in the name made dashes. */
export function worktreePath(mainRoot: string, name: string): string {
  return `${mainRoot}-${name.replace(/\//g, "-")}`;
}

export type WorktreeAdded =
  | { ok: true; path: string; branch: string }
  /** `invalid`: the name or the place was refused (the caller's to fix);
   * otherwise git failed. `why` is a sentence. */
  | { ok: false; invalid: boolean; why: string };

/** Commands a person waits for (a checkout can take a while). */
const WORKTREE_TIMEOUT_MS = 60_000;

/**
 * `git worktree add -b <name> <worktreePath> [base]`, run in the worktree
 * `from` (so without `base` the branch starts at that worktree's HEAD).
 * Refuses a name git would not take as a branch and a path that exists.
 */
export async function addWorktree(
  from: { toplevel: string; mainRoot: string },
  name: string,
  base?: string,
): Promise<WorktreeAdded> {
  const valid = await git(from.toplevel, ["check-ref-format", "--branch", name]);
  if (!valid.ok || name.startsWith("-"))
    return { ok: false, invalid: true, why: `"${name}" is not a valid branch name` };
  const path = worktreePath(from.mainRoot, name);
  if (
    await lstat(path).then(
      () => true,
      () => false,
    )
  )
    return { ok: false, invalid: true, why: `${path} already exists` };
  const args = ["worktree", "add", "-b", name, path];
  if (base !== undefined) args.push(base);
  const r = await git(from.toplevel, args, { timeoutMs: WORKTREE_TIMEOUT_MS });
  if (r.ok) return { ok: true, path, branch: name };
  const why = r.failure === "timeout" ? "git timed out" : r.stderr.trim() || `exit ${r.code}`;
  return { ok: false, invalid: r.failure === "exit", why };
}

/** At most this many other worktrees are inspected for conflicts per run. */
const MAX_WORKTREES = 16;

export interface ConflictedWorktree {
  kind: "worktree";
  path: string;
  branch: string | null;
  conflicts: number;
}

/** The repository's worktrees that hold merge conflicts: the current one from
 * its facts, the others with one `git status` each (in parallel). */
export async function conflictedWorktrees(
  facts: GitFacts,
  options: RunOptions = {},
): Promise<ConflictedWorktree[]> {
  const others = facts.worktrees
    .filter((w) => !w.bare && w.path !== facts.toplevel && existsSync(w.path))
    .slice(0, MAX_WORKTREES);
  const counted = await Promise.all(
    others.map(async (w) => {
      const r = await git(w.path, ["status", "--porcelain=v2"], options);
      return { w, conflicts: r.ok ? parseStatus(r.stdout).unmerged.length : 0 };
    }),
  );
  const out: ConflictedWorktree[] = [];
  const here = facts.unmergedPaths?.length ?? 0;
  if (here > 0)
    out.push({ kind: "worktree", path: facts.toplevel, branch: facts.branch, conflicts: here });
  for (const { w, conflicts } of counted)
    if (conflicts > 0) out.push({ kind: "worktree", path: w.path, branch: w.branch, conflicts });
  return out;
}

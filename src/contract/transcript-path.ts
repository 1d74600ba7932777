/**
 * Whether an instance accepts a session's announced transcript path (contract
 * §6.1): only inside the transcript tree of the instance's own config home
 * (`projects/` for Claude Code, `sessions/` for Codex), so
 * announcing a transcript cannot turn into reading an arbitrary file.
 *
 * Both arguments must already be resolved (symlinks and `..` followed, as
 * `realpath` does) by the caller: this is the pure half of the rule, the
 * comparison, so that every place applies the same one. POSIX paths.
 */
export function isAcceptedTranscriptPath(
  resolvedPath: string,
  resolvedConfigHome: string,
  treeName = "projects",
): boolean {
  if (!resolvedPath.startsWith("/") || !resolvedConfigHome.startsWith("/")) return false;
  const home = resolvedConfigHome.endsWith("/")
    ? resolvedConfigHome.slice(0, -1)
    : resolvedConfigHome;
  const tree = `${home}/${treeName}/`;
  if (!resolvedPath.startsWith(tree) || resolvedPath.length === tree.length) return false;
  // A resolved path has no `.`/`..` segments and no empty ones; refuse any that
  // slipped through rather than reason about them.
  return !resolvedPath
    .slice(tree.length)
    .split("/")
    .some((seg) => seg === "" || seg === "." || seg === "..");
}

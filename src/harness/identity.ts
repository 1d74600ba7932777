/**
 * Who a process speaks as (harness spec §8): `--sid`, else the Codex thread,
 * else the Claude Code session, else nobody (the person). When both harnesses'
 * variables are present Codex wins: a Codex session started inside Claude Code
 * inherits Claude's variables, never the other way round.
 */
export function sessionIdFrom(
  explicit: string | undefined,
  env: Record<string, string | undefined> = process.env,
): string | undefined {
  return (
    explicit ||
    env.CODEX_THREAD_ID ||
    env.CODEX_SESSION_ID ||
    env.CLAUDE_CODE_SESSION_ID ||
    undefined
  );
}

// How a person reattaches to a Claude Code session: `claude --resume <sid>`
// run in the session's own directory (Claude Code finds a session's
// transcript under its project directory).

export interface ResumeCommand {
  sid: string;
  cwd: string;
  argv: string[];
  /** One line to paste into a POSIX shell. */
  command: string;
}

export function resumeCommand(sid: string, cwd: string): ResumeCommand {
  const argv = ["claude", "--resume", sid];
  return { sid, cwd, argv, command: `cd ${shellQuote(cwd)} && ${argv.map(shellQuote).join(" ")}` };
}

/** Quote for a POSIX shell, only when needed. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

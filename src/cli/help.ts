// What `ccmsg help`, `ccmsg <command> --help` and a mistyped command print.
// The words come from the command table in main.ts; this module only lays
// them out.

/** A command as help shows it: `help` is "<synopsis> — <what it does>";
 * `more` adds the options and details, one per line. */
export interface CommandHelp {
  help: string;
  more?: string;
}

export const EVERY_COMMAND_OPTIONS = [
  "Options for every command: --json, --text, --sid <sid>, --state-dir <dir>, --no-start, --help",
  "A <sid> is a session's id, a unique prefix of it (4+ hex digits), its title or @title.",
].join("\n");

/** `ccmsg help`: every command on one line each. */
export function overview(commands: Record<string, CommandHelp>): string {
  return [
    "usage: ccmsg <command> [options]     (ccmsg help <command> for one command)",
    "",
    ...Object.values(commands).map((c) => `  ccmsg ${c.help}`),
    "",
    EVERY_COMMAND_OPTIONS,
    "ccmsg -v prints the version.",
  ].join("\n");
}

/** `ccmsg help <command>` and `ccmsg <command> --help`. */
export function commandHelp(entry: CommandHelp): string {
  const [synopsis, what] = entry.help.split(" — ", 2);
  const lines = [`usage: ccmsg ${synopsis}`];
  if (what !== undefined) lines.push("", `${what[0]!.toUpperCase()}${what.slice(1)}.`);
  if (entry.more !== undefined) lines.push("", entry.more);
  lines.push("", EVERY_COMMAND_OPTIONS);
  return lines.join("\n");
}

/** The command a near-miss most likely meant: one edit away (two for longer
 * names), counting a swap of neighbours as one; or the only command it begins. */
export function suggestion(name: string, names: readonly string[]): string | undefined {
  const limit = name.length >= 5 ? 2 : 1;
  let best: { name: string; distance: number } | undefined;
  for (const candidate of names) {
    const d = editDistance(name.toLowerCase(), candidate);
    if (d <= limit && (best === undefined || d < best.distance))
      best = { name: candidate, distance: d };
  }
  if (best !== undefined) return best.name;
  const prefixed = names.filter((n) => name.length >= 2 && n.startsWith(name.toLowerCase()));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/** Edits (insert, delete, replace, swap of neighbours) from `a` to `b`. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

import { accessSync, constants, realpathSync } from "node:fs";
import { delimiter, join } from "node:path";

/** One check of an installation's wiring, as the report lists it. */
export interface Check {
  name: string;
  pass: boolean;
  detail: string;
  fix?: string;
}

// How a harness runs this ccmsg: by the absolute paths of the node binary and
// the CLI script that are running now, so a hook works whatever the harness's
// PATH holds (a GUI-started harness, nvm, an npx cache that PATH never saw).

/** The running install: node and the entry script, both absolute and real. */
export interface Invocation {
  node: string;
  script: string;
}

export function runningInvocation(): Invocation {
  const script = process.argv[1];
  if (script === undefined) throw new Error("no entry script: run ccmsg through its CLI");
  return { node: realpathSync(process.execPath), script: realpathSync(script) };
}

/** A word for a POSIX shell: always single-quoted, so the line is the same
 * whatever the path holds (hook definitions are compared byte for byte). */
export function shellWord(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The shell line that runs `ccmsg <args…>` with this install. */
export function commandLine(inv: Invocation, args: readonly string[]): string {
  return [inv.node, inv.script, ...args].map(shellWord).join(" ");
}

/** The node and script a command line of ours runs (see commandLine). */
export function invocationOf(line: string): Invocation | undefined {
  const word = "'((?:[^']|'\\\\'')*)'";
  const m = new RegExp(`^${word} ${word}`).exec(line);
  if (!m) return undefined;
  const unquote = (w: string) => w.replace(/'\\''/g, "'");
  return { node: unquote(m[1]!), script: unquote(m[2]!) };
}

/** Whether the command lines found in `where` run a node and a ccmsg that
 * still exist (an upgrade or a cleaned npx cache leaves hooks pointing at
 * nothing). */
export function commandCheck(lines: string[], where: string): Check {
  const missing = new Set<string>();
  const runs = new Set<string>();
  for (const line of lines) {
    const inv = invocationOf(line);
    if (inv === undefined) {
      missing.add(`an unreadable command (${line})`);
      continue;
    }
    runs.add(`${inv.node} ${inv.script}`);
    if (!isExecutableFile(inv.node, true)) missing.add(inv.node);
    if (!isExecutableFile(inv.script, false)) missing.add(inv.script);
  }
  const pass = missing.size === 0;
  return {
    name: "hook command",
    pass,
    detail: pass
      ? [...runs].join("; ")
      : `the hooks in ${where} run ${[...missing].join(" and ")}, which does not exist`,
    ...(pass ? {} : { fix: "install again with the ccmsg you use now" }),
  };
}

function isExecutableFile(path: string, executable: boolean): boolean {
  try {
    accessSync(path, executable ? constants.X_OK : constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** An executable of that name on PATH, or undefined (no `which` spawned). */
export function onPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate, true)) return candidate;
  }
  return undefined;
}

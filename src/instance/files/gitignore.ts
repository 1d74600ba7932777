// `.gitignore` matching for `file_find` (contract §4.3.4 `respect_gitignore`),
// written to git's documented rules (gitignore(5)): blank lines and `#`
// comments skipped, `!` re-includes, a trailing `/` matches directories
// only, a pattern with a `/` before its end is anchored to its file's
// directory (otherwise it matches a name at any depth below it), `*` and `?`
// stop at `/`, `**` spans directories in `**/x`, `x/**` and `a/**/b`, and
// `[...]` classes. The last matching rule wins, deeper files after shallower
// ones. An excluded directory is never entered, so nothing below it can be
// re-included — as in git.

interface Rule {
  re: RegExp;
  negate: boolean;
  dirOnly: boolean;
  /** Matches the last path component rather than the whole relative path. */
  name: boolean;
}

/** The rules of one ignore file, and the directory they are relative to
 * (`""` = the surface root). */
export interface IgnoreLevel {
  dir: string;
  rules: Rule[];
}

/** A character class `[...]` starting at `i` as a regex source, and where it
 * ends; undefined when it is not closed (then `[` is literal). */
function charClass(p: string, i: number): { src: string; end: number } | undefined {
  let j = i + 1;
  let src = "[";
  if (p[j] === "!" || p[j] === "^") {
    src += "^";
    j++;
  }
  if (p[j] === "]") {
    src += "\\]";
    j++;
  }
  for (; j < p.length; j++) {
    const c = p[j]!;
    if (c === "]") return { src: `${src}]`, end: j };
    if (c === "\\" && j + 1 < p.length) {
      src += `\\${p[++j]}`;
      continue;
    }
    src += c === "[" || c === "^" ? `\\${c}` : c;
  }
  return undefined;
}

const SPECIAL = /[.*+?^${}()|[\]\\/]/;

/** A glob (no leading `/`, no trailing `/`) as an anchored regex. */
function globToRegex(glob: string): RegExp {
  let src = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const atStart = i === 0;
        const afterSlash = glob[i - 1] === "/";
        const next = glob[i + 2];
        if ((atStart || afterSlash) && next === "/") {
          src += "(?:.*/)?"; // `**/`: any leading directories, or none
          i += 2;
          continue;
        }
        if (afterSlash && next === undefined) {
          src += ".*"; // `/**`: everything inside
          i += 1;
          continue;
        }
        i += 1; // any other `**` is a plain `*`
      }
      src += "[^/]*";
    } else if (c === "?") {
      src += "[^/]";
    } else if (c === "[") {
      const cls = charClass(glob, i);
      if (cls === undefined) src += "\\[";
      else {
        src += cls.src;
        i = cls.end;
      }
    } else if (c === "\\" && i + 1 < glob.length) {
      const n = glob[++i]!;
      src += SPECIAL.test(n) ? `\\${n}` : n;
    } else {
      src += SPECIAL.test(c) ? `\\${c}` : c;
    }
  }
  return new RegExp(`^${src}$`);
}

/** Parse the text of a `.gitignore` (or `.git/info/exclude`). */
export function parseIgnore(text: string): Rule[] {
  const rules: Rule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    // Trailing spaces go unless escaped with a backslash.
    let line = raw.replace(/(?<!\\)\s+$/, "");
    if (line.endsWith("\\ ")) line = `${line.slice(0, -2)} `;
    if (line === "" || line.startsWith("#")) continue;
    let negate = false;
    if (line.startsWith("!")) {
      negate = true;
      line = line.slice(1);
    } else if (line.startsWith("\\!") || line.startsWith("\\#")) {
      line = line.slice(1);
    }
    let dirOnly = false;
    if (line.endsWith("/") && !line.endsWith("\\/")) {
      dirOnly = true;
      line = line.replace(/\/+$/, "");
    }
    if (line === "") continue;
    const anchored = line.includes("/");
    if (line.startsWith("/")) line = line.slice(1);
    try {
      rules.push({ re: globToRegex(line), negate, dirOnly, name: !anchored });
    } catch {
      // A pattern git would read and we cannot: skipped, never fatal.
    }
  }
  return rules;
}

/**
 * Whether `path` (relative to the surface root, `/`-separated) is ignored
 * by `levels` (shallowest first; each applies to paths below its `dir`).
 */
export function isIgnored(levels: readonly IgnoreLevel[], path: string, isDir: boolean): boolean {
  let ignored = false;
  const name = path.slice(path.lastIndexOf("/") + 1);
  for (const level of levels) {
    let sub: string;
    if (level.dir === "") sub = path;
    else if (path.startsWith(`${level.dir}/`)) sub = path.slice(level.dir.length + 1);
    else continue;
    for (const rule of level.rules) {
      if (rule.dirOnly && !isDir) continue;
      if (rule.re.test(rule.name ? name : sub)) ignored = !rule.negate;
    }
  }
  return ignored;
}

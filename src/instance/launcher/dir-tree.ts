import { join, resolve } from "node:path";
import type { DirTreeEntry } from "../../contract/files.js";
import { listContained } from "./roots.js";

// `dir_tree` (contract §4.3.4, capability `launcher`): the directories under
// the launcher's roots, for picking where a new session starts. Level by
// level, so a bounded walk covers every branch to the same depth before it
// runs out, and never through a symlink (a link is not a directory here).

export const DEFAULT_TREE_DEPTH = 2;
export const MAX_TREE_DEPTH = 8;
/** Directory nodes one answer holds at most; nodes past it come without
 * `children` (expandable by a later call). */
export const MAX_TREE_NODES = 5000;
/** Bytes of JSON the nodes may take: the answer must fit one frame. */
const MAX_TREE_BYTES = 900 * 1024;
/** What a node adds around its path: `{"path":,"children":[]},`. */
const NODE_OVERHEAD = 28;
/** Directories listed at once. */
const PARALLEL = 16;

/** Names a cwd picker has no use for: hidden directories and dependency
 * trees (which dwarf everything else). */
function skipped(name: string): boolean {
  return name.startsWith(".") || name === "node_modules";
}

interface Node {
  entry: DirTreeEntry;
  /** The resolved directory opened (the entry shows the path as asked). */
  real: string;
  /** Path relative to the requested root it was reached from. */
  rel: string;
  depth: number;
}

/**
 * The trees below `starts` (each a path as asked and the directory it
 * resolved to, checked to be inside `roots`, which are resolved), `depth`
 * levels deep. `filter` keeps the nodes
 * whose root-relative path contains it (case-insensitively) and their
 * ancestors; each requested root is always answered.
 */
export async function dirTree(
  starts: readonly { path: string; real: string }[],
  roots: readonly string[],
  options: { depth?: number; filter?: string } = {},
): Promise<DirTreeEntry[]> {
  const depth = Math.min(options.depth ?? DEFAULT_TREE_DEPTH, MAX_TREE_DEPTH);
  const top: Node[] = starts.map((s) => ({
    entry: { path: resolve(s.path) },
    real: s.real,
    rel: "",
    depth: 0,
  }));
  let budget = MAX_TREE_NODES - top.length;
  let bytes = top.reduce((n, t) => n + cost(t.entry.path), 0);
  let level = top;
  while (level.length > 0 && budget > 0) {
    const next: Node[] = [];
    const queue = level.filter((n) => n.depth < depth);
    const worker = async () => {
      for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
        if (budget <= 0) return;
        const listed = await listContained(n.real, roots);
        const names = (listed ?? [])
          .filter((d) => d.isDirectory() && !skipped(d.name))
          .map((d) => d.name)
          .sort();
        const paths = names.map((name) => join(n.entry.path, name));
        const more = paths.reduce((sum, p) => sum + cost(p), 0);
        // Left expandable rather than cut: a `children` array is complete.
        if (names.length > budget || bytes + more > MAX_TREE_BYTES) continue;
        budget -= names.length;
        bytes += more;
        n.entry.children = names.map((name, i) => {
          const child: Node = {
            entry: { path: paths[i]! },
            real: join(n.real, name),
            rel: n.rel === "" ? name : `${n.rel}/${name}`,
            depth: n.depth + 1,
          };
          next.push(child);
          return child.entry;
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, queue.length) }, worker));
    level = next;
  }
  const filter = options.filter?.toLowerCase();
  if (!filter) return top.map((n) => n.entry);
  return top.map((n) => ({ ...n.entry, ...keptChildren(n.entry, n.rel, filter) }));
}

function cost(path: string): number {
  return Buffer.byteLength(JSON.stringify(path)) + NODE_OVERHEAD;
}

/** `children` holding only the matches and their ancestors (absent stays
 * absent). */
function keptChildren(
  entry: DirTreeEntry,
  rel: string,
  filter: string,
): { children?: DirTreeEntry[] } {
  if (entry.children === undefined) return {};
  const children: DirTreeEntry[] = [];
  for (const child of entry.children) {
    const name = child.path.slice(child.path.lastIndexOf("/") + 1);
    const childRel = rel === "" ? name : `${rel}/${name}`;
    const kept = keptChildren(child, childRel, filter);
    const matches = childRel.toLowerCase().includes(filter);
    if (matches || (kept.children?.length ?? 0) > 0) children.push({ path: child.path, ...kept });
  }
  return { children };
}

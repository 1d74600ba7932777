import { execFileSync } from "node:child_process";
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  isRefusal,
  readEntries,
  setBeforeOpenForTests,
} from "../../src/instance/files/checked-open.js";
import {
  createFile,
  deleteFile,
  editFile,
  listDir,
  MAX_DIR_ENTRIES,
  mtimeAt,
  readFile,
  writeToInbox,
} from "../../src/instance/files/file-ops.js";
import { findFiles, parseQuery } from "../../src/instance/files/find.js";
import { isIgnored, parseIgnore } from "../../src/instance/files/gitignore.js";
import {
  type Admitted,
  admit,
  admitAsFile,
  normalizeRelative,
  type Surfaces,
} from "../../src/instance/files/surfaces.js";
import { decodeText, fitText, READ_LIMIT } from "../../src/instance/files/text.js";

// The filesystem side of the file ops (contract §4.3.4): admission by
// surface, the proof after open, and the races a check-then-open invites,
// made deterministic by the seam between the check and the open.

const SECRET = "TOPSECRET-outside-the-root";
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
afterEach(() => setBeforeOpenForTests(undefined));

/** world/{repo (the root), outside (a secret), notes/todo.md (external)}. */
function world() {
  const w = mkdtempSync(join(tmpdir(), "ccmsg-files-"));
  dirs.push(w);
  const root = join(w, "repo");
  const outside = join(w, "outside");
  mkdirSync(join(root, "src", "deep"), { recursive: true });
  mkdirSync(outside);
  mkdirSync(join(w, "notes"));
  writeFileSync(join(root, "src", "a.ts"), "export const a = 1;\n");
  writeFileSync(join(root, "src", "deep", "f.txt"), "inside\n");
  writeFileSync(join(outside, "f.txt"), SECRET);
  writeFileSync(join(outside, "a.ts"), SECRET);
  writeFileSync(join(w, "notes", "todo.md"), "- [ ] ship\n");
  const s: Surfaces = { root, folders: [root], external: [join(w, "notes", "todo.md")] };
  return { w, root, outside, s };
}

async function must(p: Promise<Admitted | unknown>): Promise<Admitted> {
  const a = await p;
  if (isRefusal(a)) throw new Error(`refused: ${a.msg}`);
  return a as Admitted;
}

describe("admission by surface", () => {
  it("normalizes relative paths and refuses any that climb out, are absolute or hold a NUL", () => {
    expect(normalizeRelative("")).toBe("");
    expect(normalizeRelative("./src//a.ts")).toBe("src/a.ts");
    expect(normalizeRelative("src/")).toBe("src");
    expect(normalizeRelative("src/../..")).toBeUndefined();
    expect(normalizeRelative("../x")).toBeUndefined();
    expect(normalizeRelative("/etc/passwd")).toBeUndefined();
    expect(normalizeRelative("a\0b")).toBeUndefined();
  });

  it("contained: a symlink out, `..` and absolute paths are outside; one that stays in is followed", async () => {
    const { root, outside, s } = world();
    symlinkSync(outside, join(root, "link-out"));
    symlinkSync(join(outside, "f.txt"), join(root, "file-out"));
    symlinkSync("src/a.ts", join(root, "link-in"));
    for (const p of [
      "link-out",
      "link-out/f.txt",
      "link-out/missing",
      "file-out",
      "../outside/f.txt",
      "/etc/passwd",
      "src/../../outside",
    ]) {
      const a = await admit("contained", s, p);
      expect(isRefusal(a) && a.refused, p).toBe("outside");
    }
    const a = await must(admit("contained", s, "link-in"));
    expect(a.real).toBe(join(root, "src", "a.ts"));
    expect(a.shown).toBe("link-in");
  });

  it("encoded separators and backslashes are names, never separators", async () => {
    const { s } = world();
    for (const p of ["..%2Foutside%2Ff.txt", "..\\outside\\f.txt", "%2e%2e/outside"]) {
      const a = await must(admit("contained", s, p));
      const read = await readFile(a);
      expect(isRefusal(read) && read.refused, p).toBe("missing");
    }
  });

  it("compares resolved bytes: a sibling differing in case or Unicode form is outside", async () => {
    const { w, s } = world();
    const nfc = join(w, "caf\u00e9");
    const nfd = join(w, "cafe\u0301");
    mkdirSync(nfc);
    mkdirSync(nfd);
    writeFileSync(join(nfd, "s.txt"), SECRET);
    mkdirSync(join(w, "REPO"));
    writeFileSync(join(w, "REPO", "s.txt"), SECRET);
    const ws: Surfaces = { ...s, folders: [nfc, join(w, "repo")] };
    for (const p of [join(nfd, "s.txt"), join(w, "REPO", "s.txt")]) {
      const a = await admit("workspace", ws, p);
      expect(isRefusal(a) && a.refused, p).toBe("outside");
    }
    // A root stated in another case than the disk's is not the root here.
    const a = await admit("contained", { ...s, root: join(w, "Repo") }, "src/a.ts");
    expect(isRefusal(a) && a.refused).toBe("outside");
  });

  it("external: only the exact allowlisted path, never a symlink in its place", async () => {
    const { w, outside, s } = world();
    expect(isRefusal(await admit("external", s, join(outside, "f.txt")))).toBe(true);
    const ok = await must(admit("external", s, join(w, "notes", "..", "notes", "todo.md")));
    expect(ok.shown).toBe(join(w, "notes", "todo.md"));
    rmSync(join(w, "notes", "todo.md"));
    symlinkSync(join(outside, "f.txt"), join(w, "notes", "todo.md"));
    const a = await admit("external", s, join(w, "notes", "todo.md"));
    expect(isRefusal(a) && a.refused).toBe("outside");
  });

  it("file_stat_batch's check: the first surface that admits a regular file, else nothing", async () => {
    const { w, root, outside, s } = world();
    linkSync(join(outside, "f.txt"), join(root, "hard"));
    const contained = await admitAsFile(s, join(root, "src", "a.ts"));
    expect(contained).toMatchObject({ kind: "contained", shown: "src/a.ts" });
    const workspace = await admitAsFile({ ...s, root: join(root, "src") }, join(root, "README"));
    expect(workspace).toBeUndefined(); // missing: no reason given
    writeFileSync(join(root, "README"), "hi");
    expect(
      await admitAsFile({ ...s, root: join(root, "src") }, join(root, "README")),
    ).toMatchObject({ kind: "workspace", shown: join(root, "README") });
    expect(await admitAsFile(s, join(w, "notes", "todo.md"))).toMatchObject({ kind: "external" });
    for (const p of [join(outside, "f.txt"), join(root, "src"), join(root, "hard"), "src/a.ts"])
      expect(await admitAsFile(s, p), p).toBeUndefined();
  });
});

describe("what is never opened", () => {
  let server: Server | undefined;
  afterAll(() => server?.close());

  it("FIFOs, sockets, devices and hard links are refused without blocking; listed as other", async () => {
    const { root, outside, s } = world();
    execFileSync("mkfifo", [join(root, "fifo")]);
    linkSync(join(outside, "f.txt"), join(root, "hard"));
    server = createServer();
    await new Promise<void>((r) => server!.listen(join(root, "sock"), r));
    let device = false;
    try {
      execFileSync("mknod", [join(root, "dev"), "c", "1", "3"], { stdio: "ignore" });
      device = true;
    } catch {
      // Not root: no device node can be made here.
    }
    for (const p of ["fifo", "sock", "hard", ...(device ? ["dev"] : [])]) {
      const a = await must(admit("contained", s, p));
      const read = await readFile(a);
      expect(isRefusal(read) && read.refused, p).toBe("special");
      const edit = await editFile(a, "x", { mtime_at: 0, size: 0 });
      expect(isRefusal(edit) && edit.refused, p).toBe("special");
    }
    const listed = await listDir(await must(admit("contained", s, "")));
    if (isRefusal(listed)) throw new Error(listed.msg);
    const types = Object.fromEntries(listed.map((e) => [e.name, e]));
    for (const p of ["fifo", "sock", "hard", ...(device ? ["dev"] : [])])
      expect(types[p], p).toEqual({ name: p, type: "other" });
    expect(readFileSync(join(outside, "f.txt"), "utf8")).toBe(SECRET);
  });
});

describe("the proof after open (a swap between check and open)", () => {
  /** Swap `dir` for a symlink to `to` the first time `path` is opened. */
  function swapDirAt(path: string, dir: string, to: string) {
    setBeforeOpenForTests((p) => {
      if (p !== path) return;
      setBeforeOpenForTests(undefined);
      renameSync(dir, `${dir}.was`);
      symlinkSync(to, dir);
    });
  }

  it("file_read: a directory swapped for a symlink out is refused, nothing read", async () => {
    const { root, outside, s } = world();
    const a = await must(admit("contained", s, "src/deep/f.txt"));
    swapDirAt(a.real, join(root, "src", "deep"), outside);
    const read = await readFile(a);
    expect(isRefusal(read) && read.refused).toBe("changed");
    expect(JSON.stringify(read)).not.toContain(SECRET);
  });

  it("file_read: the same file moved out under a symlink is caught by where its descriptor is", async () => {
    const { root, outside, s } = world();
    const deep = join(root, "src", "deep");
    const a = await must(admit("contained", s, "src/deep/f.txt"));
    // Same inode, nlink 1, identical content: only the descriptor's path
    // (/proc/self/fd) tells that it now lies outside the root.
    setBeforeOpenForTests(() => {
      setBeforeOpenForTests(undefined);
      renameSync(deep, join(outside, "moved"));
      symlinkSync(join(outside, "moved"), deep);
    });
    const read = await readFile(a);
    expect(isRefusal(read) && read.refused).toBe("changed");
  });

  it("file_read: the file swapped for a symlink out or a FIFO is refused at once", async () => {
    const { root, outside, s } = world();
    const f = join(root, "src", "a.ts");
    const a = await must(admit("contained", s, "src/a.ts"));
    setBeforeOpenForTests(() => {
      rmSync(f);
      symlinkSync(join(outside, "a.ts"), f);
    });
    const read = await readFile(a);
    expect(isRefusal(read) && read.refused).toBe("changed");
    setBeforeOpenForTests(() => {
      rmSync(f);
      execFileSync("mkfifo", [f]);
    });
    const fifo = await readFile(a);
    expect(isRefusal(fifo)).toBe(true);
  });

  it("dir_list: a listing swapped for a symlink out lists nothing", async () => {
    const { root, outside, s } = world();
    const a = await must(admit("contained", s, "src/deep"));
    swapDirAt(a.real, join(root, "src", "deep"), outside);
    const listed = await listDir(a);
    expect(isRefusal(listed)).toBe(true);
  });

  it("file_edit, file_create, file_delete: a parent swapped out writes and deletes nothing outside", async () => {
    const { root, outside, s } = world();
    const deep = join(root, "src", "deep");
    const before = readdirSync(outside).sort();
    const edit = await must(admit("contained", s, "src/deep/f.txt"));
    const st = statSync(join(deep, "f.txt"));
    swapDirAt(edit.real, deep, outside);
    const edited = await editFile(edit, "overwritten", { mtime_at: mtimeAt(st), size: st.size });
    expect(isRefusal(edited) && edited.refused).toBe("changed");
    rmSync(deep);
    renameSync(`${deep}.was`, deep);

    const create = await must(admit("contained", s, "src/deep/new.txt", "entry"));
    swapDirAt(deep, deep, outside);
    expect(isRefusal(await createFile(create, "x"))).toBe(true);
    rmSync(deep);
    renameSync(`${deep}.was`, deep);

    const del = await must(admit("contained", s, "src/deep/f.txt", "entry"));
    swapDirAt(deep, deep, outside);
    expect(isRefusal(await deleteFile(del))).toBe(true);

    expect(readdirSync(outside).sort()).toEqual(before);
    expect(readFileSync(join(outside, "f.txt"), "utf8")).toBe(SECRET);
  });

  it("file_find: a directory swapped out during the walk is skipped, no name from outside", async () => {
    const { root, outside, s } = world();
    writeFileSync(join(outside, "deep-secret.txt"), SECRET);
    const a = await must(admit("contained", s, ""));
    swapDirAt(join(root, "src", "deep"), join(root, "src", "deep"), outside);
    const found = await findFiles([{ real: a.real, shown: "", base: a.base }], "secret", false);
    expect(found.hits).toEqual([]);
  });

  it("file_write: an inbox directory that is a symlink out is refused", async () => {
    const { root, outside } = world();
    mkdirSync(join(root, ".ccmsg"));
    symlinkSync(outside, join(root, ".ccmsg", "inbox"));
    const r = await writeToInbox(root, "n.md", "x");
    expect(isRefusal(r) && r.refused).toBe("symlink");
    expect(existsSync(join(outside, "n.md"))).toBe(false);
  });
});

describe("the ops on disk", () => {
  let w: ReturnType<typeof world>;
  beforeEach(() => {
    w = world();
  });

  it("file_read: text, binary by a NUL or bad UTF-8, truncated at the read limit on a character", async () => {
    writeFileSync(join(w.root, "bin"), Buffer.from([0x50, 0x4b, 0x00, 0x01]));
    writeFileSync(join(w.root, "latin1"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    // 'é' (2 bytes) straddling the limit.
    writeFileSync(join(w.root, "big"), `${"x".repeat(READ_LIMIT - 1)}é and more`);
    const read = async (p: string) => {
      const r = await readFile(await must(admit("contained", w.s, p)));
      if (isRefusal(r)) throw new Error(r.msg);
      return r;
    };
    expect(await read("src/a.ts")).toMatchObject({
      content: "export const a = 1;\n",
      binary: false,
      truncated: false,
      size: 20,
    });
    expect(await read("bin")).toMatchObject({ binary: true, content: "" });
    expect(await read("latin1")).toMatchObject({ binary: true });
    const big = await read("big");
    expect(big).toMatchObject({ truncated: true, binary: false, size: READ_LIMIT + 10 });
    expect(big.content.length).toBe(READ_LIMIT - 1);
  });

  it("fits content with many escapes into a frame", () => {
    const t = fitText("\u0001".repeat(300_000), 1_000_000);
    expect(t.length).toBeLessThan(300_000);
    expect(JSON.stringify(t).length).toBeLessThanOrEqual(1_000_000);
    expect(decodeText(Buffer.from("ab\u00e9"), true)).toBe("abé");
    expect(decodeText(Buffer.from("ab\u00e9").subarray(0, 3), true)).toBe("ab");
    expect(decodeText(Buffer.from("ab\u00e9").subarray(0, 3), false)).toBeUndefined();
  });

  it("file_edit: conflict on a changed mtime or size, not_a_text_file on binary, in place otherwise", async () => {
    const f = join(w.root, "src", "a.ts");
    const ino = statSync(f).ino;
    const a = await must(admit("contained", w.s, "src/a.ts"));
    const st = statSync(f);
    const stale = await editFile(a, "x", { mtime_at: mtimeAt(st) - 1000, size: st.size });
    expect(isRefusal(stale) && stale.refused).toBe("conflict");
    const sized = await editFile(a, "x", { mtime_at: mtimeAt(st), size: st.size + 1 });
    expect(isRefusal(sized) && sized.refused).toBe("conflict");
    const ok = await editFile(a, "export const a = 2;\n", { mtime_at: mtimeAt(st), size: st.size });
    expect(ok).toMatchObject({ size: 20 });
    expect(readFileSync(f, "utf8")).toBe("export const a = 2;\n");
    expect(statSync(f).ino).toBe(ino);
    writeFileSync(join(w.root, "bin"), Buffer.from([0, 1, 2]));
    const b = await must(admit("contained", w.s, "bin"));
    const bst = statSync(join(w.root, "bin"));
    const bin = await editFile(b, "text", { mtime_at: mtimeAt(bst), size: 3 });
    expect(isRefusal(bin) && bin.refused).toBe("binary");
  });

  it("file_create: never overwrites (a dangling symlink included), never makes parents", async () => {
    symlinkSync(join(w.outside, "new.txt"), join(w.root, "dangling"));
    const made = await createFile(await must(admit("contained", w.s, "src/new.ts", "entry")), "n");
    expect(made).toBeUndefined();
    expect(readFileSync(join(w.root, "src", "new.ts"), "utf8")).toBe("n");
    const again = await createFile(await must(admit("contained", w.s, "src/new.ts", "entry")), "m");
    expect(isRefusal(again) && again.refused).toBe("exists");
    const dangling = await createFile(
      await must(admit("contained", w.s, "dangling", "entry")),
      "m",
    );
    expect(isRefusal(dangling) && dangling.refused).toBe("exists");
    expect(existsSync(join(w.outside, "new.txt"))).toBe(false);
    const orphan = await createFile(await must(admit("contained", w.s, "no/such/x", "entry")), "");
    expect(isRefusal(orphan) && orphan.refused).toBe("missing");
    expect(existsSync(join(w.root, "no"))).toBe(false);
  });

  it("file_delete: one regular file; never a directory, a symlink or its target", async () => {
    symlinkSync(join(w.outside, "f.txt"), join(w.root, "file-out"));
    symlinkSync("src/a.ts", join(w.root, "link-in"));
    const del = async (p: string) => deleteFile(await must(admit("contained", w.s, p, "entry")));
    const link = await del("link-in");
    expect(isRefusal(link) && link.refused).toBe("symlink");
    expect(existsSync(join(w.root, "src", "a.ts"))).toBe(true);
    const out = await del("file-out");
    expect(isRefusal(out) && out.refused).toBe("symlink");
    const dir = await del("src/deep");
    expect(isRefusal(dir) && dir.refused).toBe("directory");
    const gone = await del("src/nope");
    expect(isRefusal(gone) && gone.refused).toBe("missing");
    expect(await del("src/a.ts")).toBeUndefined();
    expect(existsSync(join(w.root, "src", "a.ts"))).toBe(false);
    expect(readFileSync(join(w.outside, "f.txt"), "utf8")).toBe(SECRET);
  });

  it("file_write: lands in <cwd>/.ccmsg/inbox (git-ignored), never replaces", async () => {
    const r = await writeToInbox(w.root, "notes/review.md", "# Review\n");
    expect(r).toBe(".ccmsg/inbox/notes/review.md");
    expect(readFileSync(join(w.root, ".ccmsg", "inbox", "notes", "review.md"), "utf8")).toBe(
      "# Review\n",
    );
    expect(readFileSync(join(w.root, ".ccmsg", ".gitignore"), "utf8")).toContain("*");
    const again = await writeToInbox(w.root, "notes/review.md", "x");
    expect(isRefusal(again) && again.refused).toBe("exists");
    for (const bad of ["../x", "/abs", ""])
      expect(isRefusal(await writeToInbox(w.root, bad, "x"))).toBe(true);
    expect(isRefusal(await writeToInbox(undefined, "x", "x"))).toBe(true);
  });

  it("dir_list: entries by name, symlinks as themselves, at most MAX_DIR_ENTRIES", async () => {
    symlinkSync(w.outside, join(w.root, "link-out"));
    const listed = await listDir(await must(admit("contained", w.s, "")));
    if (isRefusal(listed)) throw new Error(listed.msg);
    expect(listed.map((e) => [e.name, e.type])).toEqual([
      ["link-out", "symlink"],
      ["src", "dir"],
    ]);
    const many = join(w.root, "many");
    mkdirSync(many);
    for (let i = 0; i < MAX_DIR_ENTRIES + 5; i++) writeFileSync(join(many, `f${i}`), "");
    const big = await listDir(await must(admit("contained", w.s, "many")));
    expect(isRefusal(big) ? -1 : big.length).toBe(MAX_DIR_ENTRIES);
  });
});

describe("reading a directory", () => {
  it("reads at most its cap of entries, sorted, and says there are more", async () => {
    const { root } = world();
    const d = join(root, "many");
    mkdirSync(d);
    for (let i = 0; i < 15; i++) writeFileSync(join(d, `f${String(i).padStart(2, "0")}`), "");
    const capped = await readEntries(d, 10);
    expect(capped.more).toBe(true);
    expect(capped.entries).toHaveLength(10);
    const names = capped.entries.map((e) => e.name);
    expect(names).toEqual([...names].sort());
    expect(await readEntries(d, 15)).toMatchObject({ more: false });
  });
});

describe("file_find", () => {
  it("parses the query: words all included, -word excluded, nothing to include finds nothing", async () => {
    expect(parseQuery("  Foo -BAR baz - ")).toEqual({ include: ["foo", "baz"], exclude: ["bar"] });
    const { root, s } = world();
    const a = await must(admit("contained", s, ""));
    const start = [{ real: a.real, shown: "", base: root }];
    expect(await findFiles(start, "-src", true)).toEqual({ hits: [], truncated: false });
    expect((await findFiles(start, "SRC a.ts", true)).hits).toEqual([
      { path: "src/a.ts", type: "file" },
    ]);
    expect((await findFiles(start, "src -deep", true)).hits.map((h) => h.path)).toEqual([
      "src",
      "src/a.ts",
    ]);
  });

  it("respects .gitignore files (nested, negated, dir-only, anchored) and .git/info/exclude; shallow first", async () => {
    const { root, s } = world();
    writeFileSync(join(root, ".gitignore"), "*.log\n/build/\n!keep.log\nnode_modules/\n");
    writeFileSync(join(root, "src", ".gitignore"), "gen-*\n");
    mkdirSync(join(root, ".git", "info"), { recursive: true });
    writeFileSync(join(root, ".git", "info", "exclude"), "private.txt\n");
    for (const f of [
      "x.log",
      "keep.log",
      "build/out.txt",
      "src/build/ok.txt",
      "src/gen-x.ts",
      "node_modules/m/i.js",
      "private.txt",
    ]) {
      mkdirSync(join(root, f, ".."), { recursive: true });
      writeFileSync(join(root, f), "");
    }
    const a = await must(admit("contained", s, ""));
    const start = [{ real: a.real, shown: "", base: root }];
    const all = (await findFiles(start, "t", true)).hits.map((h) => h.path);
    expect(all).toContain("src/build/ok.txt");
    expect(all).not.toContain("build/out.txt");
    expect(all).not.toContain("src/gen-x.ts");
    expect(all).not.toContain("private.txt");
    expect(all.some((p) => p === ".git" || p.startsWith(".git/"))).toBe(false);
    const logs = (await findFiles(start, ".log", true)).hits.map((h) => h.path);
    expect(logs).toEqual(["keep.log"]);
    const everything = (await findFiles(start, ".", false)).hits.map((h) => h.path);
    expect(everything).toContain("x.log");
    expect(everything).toContain("node_modules/m/i.js");
    // A walk starting below the root still obeys the root's rules.
    const sub = await must(admit("contained", s, "src"));
    const below = await findFiles([{ real: sub.real, shown: "src", base: root }], "gen", true);
    expect(below.hits).toEqual([]);
  });

  it("never follows a symlink; lists it as one", async () => {
    const { root, outside, s } = world();
    symlinkSync(outside, join(root, "out"));
    const a = await must(admit("contained", s, ""));
    const found = await findFiles([{ real: a.real, shown: "", base: root }], "out", true);
    expect(found.hits).toEqual([{ path: "out", type: "symlink" }]);
  });

  it("truncates at its hit limit and at its budget", async () => {
    const { root, s } = world();
    for (let i = 0; i < 30; i++) writeFileSync(join(root, `match-${i}`), "");
    const a = await must(admit("contained", s, ""));
    const start = [{ real: a.real, shown: "", base: root }];
    const limited = await findFiles(start, "match", true, {
      maxHits: 10,
      maxEntries: 1e6,
      budgetMs: 10_000,
    });
    expect(limited.hits.length).toBe(10);
    expect(limited.truncated).toBe(true);
    const exact = await findFiles(start, "match", true, {
      maxHits: 30,
      maxEntries: 1e6,
      budgetMs: 10_000,
    });
    expect(exact).toMatchObject({ truncated: false });
    const broke = await findFiles(start, "deep", true, {
      maxHits: 10,
      maxEntries: 1,
      budgetMs: 10_000,
    });
    expect(broke.truncated).toBe(true);
  });
});

describe("gitignore rules", () => {
  const ignored = (text: string, path: string, dir = false) =>
    isIgnored([{ dir: "", rules: parseIgnore(text) }], path, dir);

  it.each([
    ["*.log", "a/b/c.log", false, true],
    ["/top.txt", "top.txt", false, true],
    ["/top.txt", "sub/top.txt", false, false],
    ["doc/frotz/", "doc/frotz", true, true],
    ["doc/frotz/", "a/doc/frotz", true, false],
    ["frotz/", "a/frotz", true, true],
    ["frotz/", "a/frotz", false, false],
    ["**/foo", "x/y/foo", false, true],
    ["abc/**", "abc/x/y", false, true],
    ["a/**/b", "a/b", false, true],
    ["a/**/b", "a/x/y/b", false, true],
    ["f?o", "fxo", false, true],
    ["f?o", "f/o", false, false],
    ["[ab]c", "bc", false, true],
    ["[!ab]c", "bc", false, false],
    ["\\#hash", "#hash", false, true],
    ["# comment", "# comment", false, false],
    ["*.txt\n!keep.txt", "keep.txt", false, false],
    ["trail\\ ", "trail ", false, true],
  ])("%j on %s (dir %s) → %s", (text, path, dir, expected) => {
    expect(ignored(text, path, dir)).toBe(expected);
  });

  it("a deeper file's rules apply only below it and win over shallower ones", () => {
    const levels = [
      { dir: "", rules: parseIgnore("*.gen") },
      { dir: "pkg", rules: parseIgnore("!keep.gen\n/local") },
    ];
    expect(isIgnored(levels, "pkg/keep.gen", false)).toBe(false);
    expect(isIgnored(levels, "other/keep.gen", false)).toBe(true);
    expect(isIgnored(levels, "pkg/local", false)).toBe(true);
    expect(isIgnored(levels, "local", false)).toBe(false);
  });
});

import { execFileSync } from "node:child_process";
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { requiredPath } from "../helpers/env.js";
import { startInstance, type TestInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Issue 12 item 1: the file ops (contract §4.3.4) on a real instance over its
// socket — every op × surface × role as the table and the role scope say,
// and the escape suite: nothing outside a surface is read, listed, written
// or deleted, whatever the path says (symlinks, `..`, absolute, encoded
// separators, case and Unicode variants, hard links, FIFOs, devices).
// Every reply is checked against the contract by the test peers.

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

const SID = newSid();
const OTHER = newSid();
const SECRET = "TOPSECRET-outside-every-surface";

let inst: TestInstance;
let person: Peer;
let own: Peer;
let other: Peer;
/** world/{repo (root; cwd repo/app), extra (a workspace folder), notes/todo.md
 * (an external file), outside (a secret next to everything)}. */
let w: string;
let repo: string;
let app: string;
let extra: string;
let todo: string;
let outside: string;
let device = false;
let outsideBefore: string[];

beforeAll(async () => {
  inst = await startInstance();
  w = mkdtempSync(join(tmpdir(), "ccmsg-files-it-"));
  repo = join(w, "repo");
  app = join(repo, "app");
  extra = join(w, "extra");
  outside = join(w, "outside");
  todo = join(w, "notes", "todo.md");
  for (const d of [join(repo, "src"), app, extra, outside, join(w, "notes")])
    mkdirSync(d, { recursive: true });
  writeFileSync(join(repo, "src", "a.ts"), "export const a = 1;\n");
  writeFileSync(join(repo, "bin.dat"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1]));
  writeFileSync(join(repo, ".gitignore"), "dist/\n*.log\n");
  mkdirSync(join(repo, "dist"));
  writeFileSync(join(repo, "dist", "main.js"), "");
  writeFileSync(join(repo, "debug.log"), "");
  writeFileSync(join(app, "main.ts"), "console.log('app');\n");
  writeFileSync(join(extra, "shared.md"), "# shared\n");
  writeFileSync(todo, "- [ ] ship\n");
  writeFileSync(join(outside, "secret.txt"), SECRET);
  // Escape hatches planted inside the root.
  symlinkSync(outside, join(repo, "link-out"));
  symlinkSync(join(outside, "secret.txt"), join(repo, "file-out"));
  symlinkSync("src/a.ts", join(repo, "link-in"));
  linkSync(join(outside, "secret.txt"), join(repo, "hard"));
  execFileSync("mkfifo", [join(repo, "fifo")]);
  try {
    execFileSync("mknod", [join(repo, "dev"), "c", "1", "3"], { stdio: "ignore" });
    device = true;
  } catch {
    // Not root: no device node here; FIFOs still prove "never opened".
  }
  // Siblings that differ from a surface only in case or Unicode form.
  mkdirSync(join(w, "EXTRA"));
  writeFileSync(join(w, "EXTRA", "secret.txt"), SECRET);
  mkdirSync(join(w, "extra\u0301"));
  writeFileSync(join(w, "extra\u0301", "secret.txt"), SECRET);
  outsideBefore = readdirSync(outside).sort();

  // The session's transcript names its workspace folders and external file.
  const home = requiredPath(inst.env, "CLAUDE_CONFIG_DIR");
  const project = join(home, "projects", "-world-repo-app");
  mkdirSync(project, { recursive: true });
  const transcript = join(project, `${SID}.jsonl`);
  const base = { sessionId: SID, cwd: app, isSidechain: false, userType: "external" };
  const at = (s: number) => new Date(Date.UTC(2026, 10, 30, 10, 0, s)).toISOString();
  const records = [
    {
      ...base,
      type: "user",
      uuid: "u1",
      timestamp: at(1),
      message: { role: "user", content: "go" },
    },
    {
      ...base,
      type: "attachment",
      uuid: "e1",
      timestamp: at(2),
      attachment: { type: "environment", snapshot: { additionalWorkingDirectories: [extra] } },
    },
    {
      ...base,
      type: "assistant",
      uuid: "a1",
      timestamp: at(3),
      message: {
        id: "msg_1",
        role: "assistant",
        model: "claude-opus-4-5-20251101",
        content: [{ type: "tool_use", id: "t1", name: "Read", input: { file_path: todo } }],
      },
    },
  ];
  writeFileSync(transcript, records.map((r) => `${JSON.stringify(r)}\n`).join(""));

  person = await Peer.unix(inst.socket);
  await person.helloUser();
  own = await Peer.unix(inst.socket);
  await own.helloSession(SID, { cwd: app, repo_root: repo, transcript_path: transcript });
  other = await Peer.unix(inst.socket);
  await other.helloSession(OTHER, { cwd: outside });
});

afterAll(async () => {
  for (const p of [person, own, other]) p?.close();
  await inst?.stop();
  rmSync(w, { recursive: true, force: true });
});

/** The code a reply carries, or "ok". */
async function code(peer: Peer, op: string, args: Record<string, unknown>): Promise<string> {
  const r = await peer.request(op, { sid: SID, ...args });
  return r.ok ? "ok" : r.error!.code;
}

const stamp = (p: string) => {
  const st = statSync(p);
  return { expected_mtime_at: Math.trunc(st.mtimeMs), expected_size: st.size };
};

describe("every op × surface × role", () => {
  let n = 0;
  /** Arguments for one call; fresh targets each time for the writing ops. */
  const CASES: Record<string, () => Record<string, unknown>> = {
    "dir_list contained": () => ({ kind: "contained", path: "src" }),
    "dir_list workspace": () => ({ kind: "workspace", path: extra }),
    "file_read contained": () => ({ kind: "contained", path: "src/a.ts" }),
    "file_read workspace": () => ({ kind: "workspace", path: join(app, "main.ts") }),
    "file_read external": () => ({ kind: "external", path: todo }),
    "file_create contained": () => ({ kind: "contained", path: `src/new-${++n}.ts`, content: "" }),
    "file_create workspace": () => ({
      kind: "workspace",
      path: join(extra, `n-${++n}`),
      content: "x",
    }),
    "file_edit contained": () => {
      const f = join(repo, `edit-${++n}.txt`);
      writeFileSync(f, "before\n");
      return { kind: "contained", path: `edit-${n}.txt`, content: "after\n", ...stamp(f) };
    },
    "file_edit workspace": () => {
      const f = join(extra, `edit-${++n}.txt`);
      writeFileSync(f, "before\n");
      return { kind: "workspace", path: f, content: "after\n", ...stamp(f) };
    },
    "file_edit external": () => ({
      kind: "external",
      path: todo,
      content: "- [x] ship\n",
      ...stamp(todo),
    }),
    "file_delete contained": () => {
      writeFileSync(join(repo, `del-${++n}`), "");
      return { kind: "contained", path: `del-${n}` };
    },
    "file_delete workspace": () => {
      const f = join(extra, `del-${++n}`);
      writeFileSync(f, "");
      return { kind: "workspace", path: f };
    },
    "file_find contained": () => ({ kind: "contained", query: "a.ts" }),
    "file_find workspace": () => ({ kind: "workspace", query: "shared" }),
    "file_write inbox": () => ({ path: `hand-${++n}.md`, content: "# for you\n" }),
    "file_stat_batch all": () => ({ paths: [join(repo, "src", "a.ts"), todo] }),
  };
  /** What each role gets (contract §4.2 roles; §4.1 scope `role`). */
  const expected = (op: string, role: "user" | "own" | "other") => {
    if (role === "user") return "ok";
    if (op !== "dir_list" && op !== "file_read") return "forbidden";
    return role === "own" ? "ok" : "path_forbidden";
  };

  for (const [name, args] of Object.entries(CASES)) {
    const op = name.split(" ")[0]!;
    it(`${name}: person ok, own session ${expected(op, "own")}, other session ${expected(op, "other")}`, async () => {
      const got = {
        user: await code(person, op, args()),
        own: await code(own, op, args()),
        other: await code(other, op, args()),
      };
      expect(got).toEqual({
        user: "ok",
        own: expected(op, "own"),
        other: expected(op, "other"),
      });
    });
  }

  it("replies carry what the surface shows", async () => {
    const list = await person.call<{ path: string; entries: { name: string }[] }>("dir_list", {
      sid: SID,
      kind: "contained",
    });
    expect(list.path).toBe("");
    expect(list.entries.map((e) => e.name)).toEqual(
      expect.arrayContaining(["app", "src", "link-out", "hard", "fifo"]),
    );
    const read = await own.call<Record<string, unknown>>("file_read", {
      sid: SID,
      kind: "contained",
      path: "./src//a.ts",
    });
    expect(read).toMatchObject({
      path: "src/a.ts",
      content: "export const a = 1;\n",
      binary: false,
      truncated: false,
      size: 20,
    });
    expect(read.mtime_at).toBe(Math.trunc(statSync(join(repo, "src", "a.ts")).mtimeMs));
    const bin = await person.call("file_read", { sid: SID, kind: "contained", path: "bin.dat" });
    expect(bin).toMatchObject({ binary: true, content: "", size: 7 });
    const found = await person.call<{ hits: { path: string }[] }>("file_find", {
      sid: SID,
      kind: "contained",
      query: "main",
    });
    expect(found.hits.map((h) => h.path)).toEqual(["app/main.ts"]); // dist/ ignored
    const all = await person.call<{ hits: { path: string }[] }>("file_find", {
      sid: SID,
      kind: "contained",
      query: "main",
      respect_gitignore: false,
    });
    expect(all.hits.map((h) => h.path)).toEqual(["app/main.ts", "dist/main.js"]);
    const ws = await person.call<{ hits: { path: string }[] }>("file_find", {
      sid: SID,
      kind: "workspace",
      query: "shared",
    });
    expect(ws.hits).toEqual([{ path: join(extra, "shared.md"), type: "file" }]);
    const written = await person.call("file_write", { sid: SID, path: "brief.md", content: "hi" });
    expect(written).toEqual({ sid: SID, path: ".ccmsg/inbox/brief.md" });
    expect(readFileSync(join(app, ".ccmsg", "inbox", "brief.md"), "utf8")).toBe("hi");
    expect(await code(person, "file_write", { path: "brief.md", content: "again" })).toBe(
      "file_exists",
    );
    const stat = await person.call("file_stat_batch", {
      sid: SID,
      paths: [
        join(repo, "src", "a.ts"),
        join(app, "main.ts"),
        join(extra, "shared.md"),
        todo,
        join(outside, "secret.txt"),
        join(repo, "src"),
        "src/a.ts",
        join(repo, "nope"),
      ],
    });
    expect(stat).toEqual({
      results: [
        { kind: "contained", path: "src/a.ts" },
        { kind: "contained", path: "app/main.ts" },
        { kind: "workspace", path: join(extra, "shared.md") },
        { kind: "external", path: todo },
        null,
        null,
        null,
        null,
      ],
    });
  });

  it("file_edit: the token from file_read, conflict when stale, the new token back", async () => {
    const f = join(repo, "tok.txt");
    writeFileSync(f, "v1\n");
    const read = await person.call<{ mtime_at: number; size: number }>("file_read", {
      sid: SID,
      kind: "contained",
      path: "tok.txt",
    });
    const edit = { sid: SID, kind: "contained", path: "tok.txt" };
    const done = await person.call<{ size: number; mtime_at: number }>("file_edit", {
      ...edit,
      content: "v2 longer\n",
      expected_mtime_at: read.mtime_at,
      expected_size: read.size,
    });
    expect(done.size).toBe(10);
    expect(readFileSync(f, "utf8")).toBe("v2 longer\n");
    // The first token is spent: its size no longer matches.
    expect(
      await code(person, "file_edit", {
        ...edit,
        content: "v3",
        expected_mtime_at: read.mtime_at,
        expected_size: read.size,
      }),
    ).toBe("file_conflict");
    expect(
      await code(person, "file_edit", {
        ...edit,
        content: "v3",
        expected_mtime_at: done.mtime_at,
        expected_size: done.size,
      }),
    ).toBe("ok");
    expect(
      await code(person, "file_edit", {
        kind: "contained",
        path: "bin.dat",
        content: "t",
        ...stamp(join(repo, "bin.dat")),
      }),
    ).toBe("not_a_text_file");
    expect(
      await code(person, "file_edit", {
        kind: "contained",
        path: "gone.txt",
        content: "t",
        expected_mtime_at: 0,
        expected_size: 0,
      }),
    ).toBe("file_conflict");
  });

  it("a session unknown here reaches nothing; its file_stat_batch is all misses", async () => {
    const sid = newSid();
    expect(await code(person, "file_read", { sid, kind: "contained", path: "src/a.ts" })).toBe(
      "path_forbidden",
    );
    expect(await code(person, "file_write", { sid, path: "x.md", content: "" })).toBe(
      "path_not_writable",
    );
    expect(
      await person.call("file_stat_batch", { sid, paths: [join(repo, "src", "a.ts")] }),
    ).toEqual({
      results: [null],
    });
  });
});

describe("escapes: nothing outside a surface is read, listed, written or deleted", () => {
  const refusals = (): [string, Record<string, unknown>, string][] => [
    // listing
    ["dir_list", { kind: "contained", path: "link-out" }, "path_forbidden"],
    ["dir_list", { kind: "contained", path: "../outside" }, "path_forbidden"],
    ["dir_list", { kind: "contained", path: "/" }, "path_forbidden"],
    ["dir_list", { kind: "workspace", path: join(extra, "..", "outside") }, "path_forbidden"],
    ["dir_list", { kind: "workspace" }, "path_forbidden"],
    ["dir_list", { kind: "contained", path: "src/a.ts" }, "not_found"],
    // reading
    ["file_read", { kind: "contained", path: "link-out/secret.txt" }, "path_forbidden"],
    ["file_read", { kind: "contained", path: "file-out" }, "path_forbidden"],
    ["file_read", { kind: "contained", path: "../outside/secret.txt" }, "path_forbidden"],
    ["file_read", { kind: "contained", path: "src/../../outside/secret.txt" }, "path_forbidden"],
    ["file_read", { kind: "contained", path: "PLACEHOLDER_ABS" }, "path_forbidden"],
    ["file_read", { kind: "contained", path: "..%2Foutside%2Fsecret.txt" }, "not_found"],
    ["file_read", { kind: "contained", path: "..\\outside\\secret.txt" }, "not_found"],
    ["file_read", { kind: "contained", path: "SRC/A.TS" }, "not_found"],
    ["file_read", { kind: "contained", path: "hard" }, "path_forbidden"],
    ["file_read", { kind: "contained", path: "fifo" }, "path_forbidden"],
    ["file_read", { kind: "contained", path: "src" }, "path_forbidden"],
    ["file_read", { kind: "workspace", path: "PLACEHOLDER_OUT" }, "path_forbidden"],
    ["file_read", { kind: "workspace", path: "PLACEHOLDER_CASE" }, "path_forbidden"],
    ["file_read", { kind: "workspace", path: "PLACEHOLDER_NFD" }, "path_forbidden"],
    ["file_read", { kind: "workspace", path: "src/a.ts" }, "path_forbidden"],
    ["file_read", { kind: "external", path: "PLACEHOLDER_OUT" }, "path_forbidden"],
    // writing
    [
      "file_create",
      { kind: "contained", path: "link-out/planted.txt", content: "x" },
      "path_forbidden",
    ],
    [
      "file_create",
      { kind: "contained", path: "../outside/planted.txt", content: "x" },
      "path_forbidden",
    ],
    ["file_create", { kind: "contained", path: "file-out", content: "x" }, "file_exists"],
    ["file_create", { kind: "contained", path: "no/such/dir.txt", content: "x" }, "path_forbidden"],
    [
      "file_create",
      { kind: "workspace", path: "PLACEHOLDER_NEW_OUT", content: "x" },
      "path_forbidden",
    ],
    [
      "file_edit",
      { kind: "contained", path: "file-out", content: "x", expected_mtime_at: 0, expected_size: 0 },
      "invalid_args",
    ],
    [
      "file_edit",
      { kind: "contained", path: "hard", content: "x", expected_mtime_at: 0, expected_size: 0 },
      "invalid_args",
    ],
    [
      "file_edit",
      { kind: "contained", path: "fifo", content: "x", expected_mtime_at: 0, expected_size: 0 },
      "invalid_args",
    ],
    [
      "file_edit",
      {
        kind: "external",
        path: "PLACEHOLDER_OUT",
        content: "x",
        expected_mtime_at: 0,
        expected_size: 0,
      },
      "invalid_args",
    ],
    ["file_write", { path: "../../outside/planted.txt", content: "x" }, "path_not_writable"],
    ["file_write", { path: "PLACEHOLDER_NEW_OUT", content: "x" }, "path_not_writable"],
    // deleting
    ["file_delete", { kind: "contained", path: "file-out" }, "path_forbidden"],
    ["file_delete", { kind: "contained", path: "link-out/secret.txt" }, "path_forbidden"],
    ["file_delete", { kind: "contained", path: "link-out" }, "path_forbidden"],
    ["file_delete", { kind: "contained", path: "src" }, "path_forbidden"],
    ["file_delete", { kind: "contained", path: "fifo" }, "path_forbidden"],
    ["file_delete", { kind: "contained", path: "" }, "invalid_args"],
    ["file_delete", { kind: "contained", path: "." }, "path_forbidden"],
    // finding
    ["file_find", { kind: "contained", root: "link-out", query: "secret" }, "path_forbidden"],
    ["file_find", { kind: "contained", root: "../outside", query: "secret" }, "path_forbidden"],
  ];
  const fill = (args: Record<string, unknown>) => {
    const map: Record<string, string> = {
      PLACEHOLDER_ABS: join(outside, "secret.txt"),
      PLACEHOLDER_OUT: join(outside, "secret.txt"),
      PLACEHOLDER_NEW_OUT: join(outside, "planted.txt"),
      PLACEHOLDER_CASE: join(w, "EXTRA", "secret.txt"),
      PLACEHOLDER_NFD: join(w, "extra\u0301", "secret.txt"),
    };
    return Object.fromEntries(
      Object.entries(args).map(([k, v]) => [k, typeof v === "string" && v in map ? map[v] : v]),
    );
  };

  it("each escape is refused with the op's own code, and no reply carries the secret", async () => {
    const offenders: string[] = [];
    const cases = refusals();
    if (device) {
      cases.push(["file_read", { kind: "contained", path: "dev" }, "path_forbidden"]);
      cases.push([
        "file_edit",
        { kind: "contained", path: "dev", content: "x", expected_mtime_at: 0, expected_size: 0 },
        "invalid_args",
      ]);
    }
    for (const [op, args, want] of cases) {
      const r = await person.request(op, { sid: SID, ...fill(args) });
      const got = r.ok ? "ok" : r.error!.code;
      if (got !== want)
        offenders.push(`${op} ${JSON.stringify(args)}: ${got} (${r.error?.msg ?? ""})`);
      if (JSON.stringify(r).includes(SECRET))
        offenders.push(`${op} ${JSON.stringify(args)}: leaked`);
    }
    expect(offenders).toEqual([]);
  });

  it("a walk shows the way out only as a symlink, never what is behind it", async () => {
    const found = await person.call<{ hits: { path: string; type: string }[] }>("file_find", {
      sid: SID,
      kind: "contained",
      query: "o",
      respect_gitignore: false,
    });
    const paths = found.hits.map((h) => h.path);
    expect(found.hits).toContainEqual({ path: "link-out", type: "symlink" });
    expect(found.hits).toContainEqual({ path: "file-out", type: "symlink" });
    expect(paths.filter((p) => p.startsWith("link-out/"))).toEqual([]);
    expect(paths).not.toContain("hard");
    const stat = await person.call<{ results: unknown[] }>("file_stat_batch", {
      sid: SID,
      paths: [
        join(repo, "link-out", "secret.txt"),
        join(repo, "file-out"),
        join(repo, "hard"),
        join(repo, "fifo"),
      ],
    });
    expect(stat.results).toEqual([null, null, null, null]);
  });

  it("deleting a hard link removes only its name inside the root", async () => {
    expect(await code(person, "file_delete", { kind: "contained", path: "hard" })).toBe("ok");
    expect(existsSync(join(repo, "hard"))).toBe(false);
  });

  afterAll(() => {
    // Outside: the same entries, the same secret, nothing planted.
    expect(readdirSync(outside).sort()).toEqual(outsideBefore);
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe(SECRET);
    expect(existsSync(join(w, "planted.txt"))).toBe(false);
  });
});

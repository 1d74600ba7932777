import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, childEnv, isolatedHome, ROOT, runCli, sharedInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// What a new user tripped on (issue 8, items 16–18): help that only helps,
// options where people put them, errors a person can read, and the documented
// examples doing what they say.

const shared = sharedInstance();
afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

const VERSION = (
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }
).version;

/** Run the CLI on a terminal (a pseudo-terminal from `script`), as a person
 * types it: stdout and stderr both reach the terminal, returned as lines. */
function onTerminal(
  args: string[],
  extra: Record<string, string> = shared.env,
): Promise<{ code: number | null; lines: string[] }> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, CLI, ...args].map(quote).join(" ");
  return new Promise((resolve) => {
    const child = spawn("script", ["-qec", command, "/dev/null"], {
      env: childEnv(extra),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.stdin.end();
    child.on("close", (code) => {
      resolve({ code, lines: out.split(/\r?\n/).filter((l) => l !== "") });
    });
  });
}

/** A state dir nobody has used: nothing answers there. */
function emptyHome() {
  const h = isolatedHome();
  const stateDir = join(h.root, "state", "ccmsg");
  return { env: { ...h.env, CCMSG_STATE_DIR: stateDir }, stateDir };
}

describe("--help and help", () => {
  it("`ping --help` prints ping's help and does nothing else (no instance is started)", async () => {
    const h = emptyHome();
    const r = await runCli(["ping", "--help"], h.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("usage: ccmsg ping");
    expect(r.stdout).not.toContain("instance ");
    expect(existsSync(join(h.stateDir, "ccmsg.sock"))).toBe(false);
    expect(existsSync(join(h.stateDir, "instance.json"))).toBe(false);
  });

  it("`statusline --help` answers at once, without waiting for stdin", async () => {
    const r = await runCli(["statusline", "--help"], shared.env, undefined, {
      keepStdinOpen: true,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("usage: ccmsg statusline");
  });

  it("`ccmsg help <command>` is `<command> --help`; every command has its help", async () => {
    const viaHelp = await runCli(["help", "kv"], shared.env);
    const viaFlag = await runCli(["kv", "-h"], shared.env);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toContain("usage: ccmsg kv");
    expect(viaFlag.stdout).toBe(viaHelp.stdout);
    const all = await runCli(["help"], shared.env);
    const names = [...all.stdout.matchAll(/^ {2}ccmsg (\S+)/gm)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(10);
    for (const name of names) {
      const r = await runCli([name, "--help"], shared.env);
      expect({ name, code: r.code, head: r.stdout.split("\n")[0] }).toEqual({
        name,
        code: 0,
        head: expect.stringMatching(new RegExp(`^usage: ccmsg ${name}\\b`)),
      });
    }
  });

  it("`-v`, `--version` and `version` print the version", async () => {
    for (const flag of ["-v", "--version", "version"]) {
      const r = await runCli([flag], shared.env);
      expect({ flag, out: r.stdout, code: r.code }).toEqual({
        flag,
        out: `ccmsg ${VERSION}\n`,
        code: 0,
      });
    }
  });
});

describe("global options before the command", () => {
  it("`ccmsg --state-dir <dir> --json ping` speaks to that directory's instance", async () => {
    const { CCMSG_STATE_DIR: _, ...noDir } = shared.env;
    const r = await runCli(["--state-dir", shared.inst.stateDir, "--json", "ping"], noDir);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ instance: shared.inst.id });
    const h = emptyHome();
    const refused = await runCli(["--no-start", `--state-dir=${h.stateDir}`, "ping"], noDir);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr).error).toMatchObject({
      code: "instance_unreachable",
      msg: expect.stringContaining(h.stateDir),
    });
  });
});

describe("errors a person reads", () => {
  it("on a terminal: one readable line, with a suggestion for a near-miss command", async () => {
    const r = await onTerminal(["pnig"]);
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([expect.stringContaining('unknown command "pnig"')]);
    expect(r.lines[0]).toContain('did you mean "ping"?');
    expect(r.lines[0]).not.toContain("{");
    const far = await onTerminal(["frobnicate"]);
    expect(far.lines).toEqual([expect.stringContaining("ccmsg help")]);
    expect(far.lines[0]).not.toContain("did you mean");
  });

  it("a bad option on a terminal names the option and where the usage is", async () => {
    const r = await onTerminal(["ping", "--bogus"]);
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([expect.stringMatching(/^ccmsg ping: .*--bogus.*ccmsg help ping/)]);
  });

  it("--json keeps JSON errors on a terminal; a pipe gets JSON without the whole usage", async () => {
    const json = await onTerminal(["pnig", "--json"]);
    expect(json.lines).toHaveLength(1);
    expect(JSON.parse(json.lines[0]!).error).toMatchObject({ code: "invalid_args" });
    const piped = await runCli(["pnig"], shared.env);
    const error = JSON.parse(piped.stderr).error;
    expect(error).toMatchObject({ code: "invalid_args", msg: expect.stringContaining("ping") });
    expect(error.msg).not.toContain("\n");
    // --text asks for the readable line even on a pipe.
    const text = await runCli(["pnig", "--text"], shared.env);
    expect(text.stderr.trim().split("\n")).toHaveLength(1);
    expect(text.stderr).toContain('did you mean "ping"?');
  });

  it("a malformed session id is explained in words, never as a regular expression", async () => {
    const r = await onTerminal(["post", "nope", "hi"]);
    expect(r.code).toBe(1);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toContain("a session id is a lower-case UUID");
    expect(r.lines[0]).not.toMatch(/\[0-9a-f\]|\^|\$'/);
    const ns = await runCli(["kv", "set", "Bad", "k", "1"], shared.env);
    const nsError = JSON.parse(ns.stderr).error;
    expect(nsError.code).toBe("invalid_args");
    expect(nsError.msg).toContain("namespace");
    expect(nsError.msg).not.toMatch(/\[a-z\]|\{0,63\}/);
    const key = await runCli(["kv", "set", "notes", "a\tb", "1"], shared.env);
    const keyError = JSON.parse(key.stderr).error;
    expect(keyError.msg).toContain("control characters");
    expect(keyError.msg).not.toContain("CodePointString");
  });
});

describe("notify, as the guides show it (docs/04-sessions-and-messages.md)", () => {
  it("inside a session it reaches the person; outside one the error says what to do", async () => {
    const watcher = await Peer.unix(shared.inst.socket);
    await watcher.helloUser();
    await watcher.call("topic_subscribe", { topic: "notify" });
    const A = newSid();
    const inside = await runCli(["notify", "need a decision"], {
      ...shared.env,
      CLAUDE_CODE_SESSION_ID: A,
    });
    expect(inside.code, inside.stderr).toBe(0);
    const seen = await watcher.next((p) => p.topic === "notify");
    expect(seen.data).toMatchObject({ sid: A, text: "need a decision" });

    const outside = await runCli(["notify", "need a decision"], shared.env);
    expect(outside.code).toBe(1);
    const error = JSON.parse(outside.stderr).error;
    expect(error.code).toBe("invalid_args");
    expect(error.msg).toContain("inside a session");
    expect(error.msg).toContain("--about <sid>");
    expect(error.msg).not.toContain("/sid");

    // A person names the session the line is about.
    const person = await runCli(["notify", "--about", A, "look at this"], shared.env);
    expect(person.code, person.stderr).toBe(0);
    const about = await watcher.next((p) => p.topic === "notify");
    expect(about.data).toMatchObject({ sid: A, text: "look at this" });
    watcher.close();
  });
});

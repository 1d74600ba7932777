import { type ChildProcess, spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, isolatedHome, ROOT } from "../helpers/instance.js";

// The README's commands, run as a newcomer runs them: every line of a ```sh
// block, in order, in a temp home with `ccmsg` on PATH. Output is shown in
// ```text blocks, which are never run. And every relative link of the README
// and the guides points at a file (and a heading) that exists.

const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** The fenced blocks of a Markdown text: info string and lines. */
function fences(markdown: string): { info: string; lines: string[] }[] {
  const blocks: { info: string; lines: string[] }[] = [];
  let open: { info: string; lines: string[] } | undefined;
  for (const line of markdown.split("\n")) {
    const fence = /^\s*```(.*)$/.exec(line);
    if (fence !== null) {
      if (open === undefined) {
        open = { info: fence[1]!.trim(), lines: [] };
        blocks.push(open);
      } else open = undefined;
    } else open?.lines.push(line.trim());
  }
  return blocks;
}

/** The commands of the README's ```sh blocks, comments cut, `a && b` split. */
function readmeCommands(): string[] {
  return fences(README)
    .filter((b) => b.info === "sh")
    .flatMap((b) => b.lines)
    .map((line) => line.replace(/\s+#\s.*$/, "").trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .flatMap((line) => line.split(/\s+&&\s+/));
}

/** Commands that cannot run here as written, and why. */
const NOT_RUN: Record<string, string> = {
  "npm install":
    "installs the dependencies this suite runs on; CI runs `npm ci` itself before `npm test` (.ci/run)",
  "npm test": "runs this suite (.ci/run calls it): running it from here would run it again",
  "npm i -g .":
    "installs into the machine's global prefix, outside the temp home; the `ccmsg` shim on PATH stands in for it",
};

const home = isolatedHome();
const bin = join(home.root, "bin");
mkdirSync(bin);
// What `npm i -g .` gives: a `ccmsg` on PATH that runs this checkout's build.
writeFileSync(join(bin, "ccmsg"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
chmodSync(join(bin, "ccmsg"), 0o755);
const env: NodeJS.ProcessEnv = {
  ...home.env,
  // The real Claude Code (the devDependency) is the `claude` the plugin registers with.
  PATH: [bin, join(ROOT, "node_modules", ".bin"), process.env.PATH].join(":"),
  // npm asks the registry whether it is up to date; nothing here needs that.
  npm_config_update_notifier: "false",
};

const started = new Set<ChildProcess>();

function start(command: string): ChildProcess {
  // A process group of its own, as a terminal's foreground job is: Ctrl-C
  // signals the whole group.
  const child = spawn("sh", ["-c", command], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  started.add(child);
  child.on("exit", () => started.delete(child));
  return child;
}

function run(command: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = start(command);
    let output = "";
    child.stdout!.on("data", (c: Buffer) => {
      output += c;
    });
    child.stderr!.on("data", (c: Buffer) => {
      output += c;
    });
    child.on("close", (code) => resolve({ code, output }));
  });
}

afterAll(async () => {
  for (const child of started) process.kill(-child.pid!, "SIGKILL");
  // `ccmsg open` started an instance in the background, as any command does.
  await run("ccmsg daemon stop");
});

describe("the README's commands", () => {
  const commands = readmeCommands();

  it("are the ones the README shows in ```sh blocks, and every fenced block says what it is", () => {
    expect(fences(README).filter((b) => b.info === "")).toEqual([]);
    expect(commands).toContain("npm start");
    for (const skipped of Object.keys(NOT_RUN)) expect(commands).toContain(skipped);
  });

  it("`npm start` runs an instance in the foreground that prints the console's sign-in link and stops on Ctrl-C", async () => {
    // The README's `npm start` as a terminal's foreground job; `exec`, so the
    // exit status after Ctrl-C is npm's own rather than the wrapping shell's.
    const child = start("exec npm start");
    let stdout = "";
    const consoleShown = new Promise<void>((resolve) => {
      child.stdout!.on("data", (c: Buffer) => {
        stdout += c;
        if (/^Web console: http:\/\/\S+\n {2}sign in: \S+owner\/login\?token=/m.test(stdout))
          resolve();
      });
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    await Promise.race([consoleShown, exited]);
    expect(stdout).toMatch(/"event":"started"/);
    expect(stdout).toMatch(/^Web console: /m);
    expect((await run("ccmsg --no-start ping")).code).toBe(0);
    process.kill(-child.pid!, "SIGINT"); // Ctrl-C
    expect(await exited).toBe(0);
    expect((await run("ccmsg --no-start ping")).code).not.toBe(0);
  });

  it("every other command runs as shown and exits 0", async () => {
    for (const command of commands) {
      if (command === "npm start" || Object.hasOwn(NOT_RUN, command)) continue;
      const { code, output } = await run(command);
      expect({ command, code, output }).toEqual({ command, code: 0, output });
    }
  });
});

/** GitHub's anchor for a heading. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replaceAll(" ", "-");
}

/** The lines of a Markdown text that are not in a fenced block. */
function outsideFences(markdown: string): string {
  let inFence = false;
  return markdown
    .split("\n")
    .filter((line) => {
      if (/^\s*```/.test(line)) inFence = !inFence;
      return !inFence && !/^\s*```/.test(line);
    })
    .join("\n");
}

function anchors(path: string): Set<string> {
  const found = new Set<string>();
  for (const line of outsideFences(readFileSync(path, "utf8")).split("\n")) {
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (heading !== null) found.add(slug(heading[1]!));
  }
  return found;
}

describe("links", () => {
  it("every relative link of README.md and docs/*.md names a file that exists, and a heading in it", () => {
    const docs = readdirSync(join(ROOT, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => join("docs", f));
    const broken: string[] = [];
    for (const file of ["README.md", ...docs]) {
      const text = outsideFences(readFileSync(join(ROOT, file), "utf8"));
      for (const [, href] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(href!)) continue;
        const [path, anchor] = href!.split("#");
        const target = path === "" ? join(ROOT, file) : join(ROOT, dirname(file), path!);
        if (!existsSync(target)) broken.push(`${file}: ${href} (no such file)`);
        else if (anchor !== undefined && target.endsWith(".md") && !anchors(target).has(anchor))
          broken.push(`${file}: ${href} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
    expect(docs.length).toBeGreaterThan(10);
  });
});

import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { LiveSessionFile } from "../../src/harness/claude/session-files.js";
import { TypedRoute } from "../../src/instance/messaging/typed-route.js";
import { silentLogger } from "../../src/util/logger.js";

// The typed route's own decisions (DR-0055), against a fake `tmux` on PATH
// that shows a given screen, logs what it is asked, and — when told to —
// writes the person's turn into the session's transcript as Claude Code does
// once the keys arrive.

const SID = "5b0c9e2e-3f7a-4d1e-9c7b-2a4f6e8d0c1a";
const RULE = "─".repeat(60);
const EMPTY = ["● noted", RULE, "❯\u00a0", RULE, "  ⏸ manual mode on"].join("\n");
const DRAFT = ["● noted", RULE, "❯\u00a0half a thought", RULE, "  ⏸ manual mode on"].join("\n");

function setup(screen: string, records: boolean, row: Partial<LiveSessionFile> = {}) {
  const root = mkdtempSync(join(tmpdir(), "ccmsg-typed-route-"));
  const home = join(root, "claude");
  const project = join(home, "projects", "-work");
  mkdirSync(project, { recursive: true });
  const transcript = join(project, `${SID}.jsonl`);
  const log = join(root, "tmux.log");
  writeFileSync(join(root, "screen"), screen);
  const record = JSON.stringify({
    type: "user",
    message: { role: "user", content: "please run the tests" },
    origin: { kind: "human" },
    timestamp: "2026-12-02T03:53:17.013Z",
  });
  writeFileSync(
    join(root, "tmux"),
    `#!${process.execPath}
const fs = require("node:fs");
const argv = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify(argv) + "\\n");
if (argv.includes("capture-pane")) process.stdout.write(fs.readFileSync(${JSON.stringify(join(root, "screen"))}, "utf8"));
if (argv.includes("send-keys") && ${records}) fs.appendFileSync(${JSON.stringify(transcript)}, ${JSON.stringify(`${record}\n`)});
`,
  );
  chmodSync(join(root, "tmux"), 0o755);
  const state: LiveSessionFile = {
    path: join(home, "sessions", "42.json"),
    pid: 42,
    sessionId: SID,
    status: "idle",
    tmux: "main:@1.%3",
    tmuxSocket: "/tmp/ccmsg-fake-tmux.sock",
    ...row,
  };
  const route = new TypedRoute(
    {
      ...{ enabled: true, home, env: { PATH: `${root}:/usr/bin:/bin` } },
      ...{ find: async () => state, confirmMs: CONFIRM_MS },
    },
    silentLogger,
  );
  const calls = () =>
    existsSync(log)
      ? readFileSync(log, "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as string[])
      : [];
  return { route, calls };
}

/** The wait for the typed turn, shortened: the fake writes it at once. */
const CONFIRM_MS = 500;

const sent = (calls: string[][]) => calls.filter((c) => c.includes("send-keys"));

describe("the typed route", () => {
  it("types into the pane of an idle session with an empty box, and confirms from the transcript", async () => {
    const { route, calls } = setup(EMPTY, true);
    expect(await route.deliver(SID, "please run the tests")).toEqual({
      typed: "confirmed",
      at: Date.parse("2026-12-02T03:53:17.013Z"),
    });
    expect(sent(calls())).toEqual([
      [
        "-S",
        "/tmp/ccmsg-fake-tmux.sock",
        "send-keys",
        "-t",
        "%3",
        "-l",
        "please run the tests",
        ";",
        "send-keys",
        "-t",
        "%3",
        "Enter",
      ],
    ]);
  });

  it("says unconfirmed when the turn does not appear: typed once, never sent again", async () => {
    const { route, calls } = setup(EMPTY, false);
    expect(await route.deliver(SID, "please run the tests")).toEqual({ typed: "unconfirmed" });
    expect(sent(calls())).toHaveLength(1);
  });

  it("types nothing over unsent text, into a session busy or with a dialog open, or a text that is not one plain line", async () => {
    for (const [screen, row, text] of [
      [DRAFT, {}, "please run the tests"],
      [EMPTY, { status: "busy" }, "please run the tests"],
      [EMPTY, { status: "waiting", waitingFor: "permission prompt" }, "please run the tests"],
      [EMPTY, { tmux: undefined }, "please run the tests"],
      [EMPTY, {}, "line one\nline two"],
      [EMPTY, {}, "/clear"],
    ] as const) {
      const { route, calls } = setup(screen, true, row);
      expect(await route.deliver(SID, text), JSON.stringify([row, text])).toBeUndefined();
      expect(sent(calls())).toEqual([]);
    }
  });
});

import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeModel, type ModelRequest } from "../helpers/fake-model.js";
import {
  isolatedHome,
  ROOT,
  runCli,
  startInstance,
  type TestInstance,
} from "../helpers/instance.js";
import { CLAUDE, claudeSetup } from "../helpers/real-claude.js";

// The reservation hook (DR-0041) in the REAL Claude Code (the devDependency,
// harness spec §11) with ccmsg's plugin installed, against a scripted model:
// the model reads a file another agent reserved and asks to edit it. With
// `reservations.on_conflict: "block"` the edit is denied and the tool result
// tells the model who holds the file; by default it goes through and the
// warning reaches the model's context.

const BIN = join(ROOT, "node_modules", ".bin");
const HOLDER = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa";
const run = promisify(execFile);

let inst: TestInstance;
let model: FakeModel;
let cwd: string;
let file: string;
let claudeEnv: Record<string, string>;
let configPath: string;

/** The model: read the file, then edit it, then stop. Requests that offer no
 * Edit tool (Claude Code's side requests) just get text. */
function script(req: ModelRequest) {
  if (!req.raw.includes('"name":"Edit"')) return { text: "ok" };
  const results = (req.raw.match(/"type":"tool_result"/g) ?? []).length;
  if (results === 0) return { tool: { name: "Read", input: { file_path: file } } };
  if (results === 1)
    return {
      tool: {
        name: "Edit",
        input: { file_path: file, old_string: "answer = 1", new_string: "answer = 2" },
      },
    };
  return { text: "done" };
}

beforeAll(async () => {
  const home = isolatedHome();
  inst = await startInstance({ env: home.env });
  model = await FakeModel.start(script);
  cwd = join(inst.env.HOME!, "widgets");
  mkdirSync(join(cwd, "src"), { recursive: true });
  file = join(cwd, "src", "answer.ts");
  configPath = join(home.env.XDG_CONFIG_HOME!, "ccmsg", "config.json");
  mkdirSync(join(home.env.XDG_CONFIG_HOME!, "ccmsg"), { recursive: true });
  claudeEnv = claudeSetup(
    { HOME: inst.env.HOME!, CLAUDE_CONFIG_DIR: inst.env.CLAUDE_CONFIG_DIR! },
    cwd,
    model.url,
    // The real `claude` on PATH to register the plugin with; the hooks read
    // ccmsg's config from this config home.
    { PATH: `${BIN}:${process.env.PATH}`, XDG_CONFIG_HOME: home.env.XDG_CONFIG_HOME! },
  );
  const installed = await runCli(["plugin", "install", "claude", "--json"], {
    ...claudeEnv,
    XDG_STATE_HOME: inst.env.XDG_STATE_HOME,
    CCMSG_STATE_DIR: inst.stateDir,
  });
  expect(installed.code, installed.stderr).toBe(0);
  // Another agent holds src/ for half an hour.
  const reserved = await runCli(
    ["reserve", "src/**", "--for", "30m", "--reason", "renaming answer", "--sid", HOLDER, "--json"],
    { ...inst.env, CCMSG_STATE_DIR: inst.stateDir },
    undefined,
    { cwd },
  );
  expect(reserved.code, reserved.stderr).toBe(0);
}, 60_000);

afterAll(async () => {
  await model?.close();
  await inst?.stop();
});

/** One print-mode run that reads and edits the file; the model's requests
 * of that run (its session's). */
async function editRun(onConflict: "warn" | "block"): Promise<ModelRequest[]> {
  writeFileSync(file, "export const answer = 1;\n");
  writeFileSync(configPath, JSON.stringify({ reservations: { on_conflict: onConflict } }));
  const seen = model.requests.length;
  const { stdout } = await run(
    CLAUDE,
    ["-p", "change the answer", "--output-format", "json", "--permission-mode", "acceptEdits"],
    { cwd, env: claudeEnv, timeout: 60_000 },
  );
  const { session_id: sid } = JSON.parse(stdout) as { session_id: string };
  return model.requests.slice(seen).filter((r) => r.sid === sid && r.raw.includes('"name":"Edit"'));
}

/** The text of the tool results in the model's last request. */
function lastToolResult(requests: ModelRequest[]): string {
  const last = requests.at(-1)!.body.messages!.at(-1) as { content: unknown };
  return JSON.stringify(last.content);
}

describe("the reservation hook in the real Claude Code", () => {
  it("blocks an Edit inside another agent's reservation when configured to: the file stays as it was, the tool result says who holds it", async () => {
    const requests = await editRun("block");
    expect(requests).toHaveLength(3);
    expect(readFileSync(file, "utf8")).toBe("export const answer = 1;\n");
    const result = lastToolResult(requests);
    expect(result).toContain('"is_error":true');
    expect(result).toContain("reserved by another agent");
    expect(result).toContain(`session ${HOLDER}`);
    expect(result).toContain("renaming answer");
  }, 90_000);

  it("by default lets the Edit through and puts the warning before the model", async () => {
    const requests = await editRun("warn");
    expect(requests).toHaveLength(3);
    expect(readFileSync(file, "utf8")).toBe("export const answer = 2;\n");
    const after = requests.at(-1)!.raw;
    expect(after).toContain("ccmsg warning");
    expect(after).toContain(HOLDER);
  }, 90_000);
});

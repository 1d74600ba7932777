import { appendFileSync, cpSync, readdirSync, readFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Pushed } from "../../src/client/client.js";
import { SessionErrorsData, SessionStatusData } from "../../src/contract/session-status.js";
import { validationErrors } from "../../src/contract/validate.js";
import { requiredPath } from "../helpers/env.js";
import { ROOT, startInstance, type TestInstance } from "../helpers/instance.js";
import { contractViolations, Peer } from "../helpers/peer.js";

// Issue 10 item 3: `session_status:<sid>` folded from a real-format transcript
// (the fixture: todos, a sub-agent, a pending Bash call, a partial last line)
// and the files beside it; `session_errors` for sessions stopped on an API
// error. Both follow appends.

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

const SID = "3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d";
const FIXTURE = join(ROOT, "test", "fixtures", "claude-code", "config-home");

let inst: TestInstance;
let home: string;
let transcript: string;
let person: Peer;
let session: Peer;
beforeAll(async () => {
  inst = await startInstance();
  home = requiredPath(inst.env, "CLAUDE_CONFIG_DIR");
  cpSync(join(FIXTURE, "projects"), join(home, "projects"), { recursive: true });
  cpSync(join(FIXTURE, "todos"), join(home, "todos"), { recursive: true });
  // As the harness leaves it: the todo file written in the fixture's time,
  // after the transcript's TodoWrite (10:00:08) and before what tests append.
  const written = new Date("2026-11-30T10:00:30.000Z");
  for (const f of readdirSync(join(home, "todos")))
    utimesSync(join(home, "todos", f), written, written);
  transcript = join(home, "projects", "-home-dev-widgets", `${SID}.jsonl`);
  person = await Peer.unix(inst.socket);
  await person.helloUser();
  session = await Peer.unix(inst.socket);
  await session.helloSession(SID, { cwd: "/home/dev/widgets", transcript_path: transcript });
});
afterAll(async () => {
  person.client.close();
  session.client.close();
  await inst.stop();
});

let clock = Date.parse("2026-11-30T10:02:00.000Z");
function at(): string {
  clock += 1000;
  return new Date(clock).toISOString();
}
function append(...records: Record<string, unknown>[]): void {
  appendFileSync(transcript, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
}
const main = { isSidechain: false, sessionId: SID, cwd: "/home/dev/widgets", userType: "external" };
function assistant(
  content: unknown[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    ...main,
    type: "assistant",
    uuid: `a-${clock}`,
    timestamp: at(),
    message: {
      id: `msg_${clock}`,
      role: "assistant",
      model: "claude-opus-4-5-20251101",
      content,
      stop_reason: "end_turn",
      usage: {
        input_tokens: 10,
        cache_creation_input_tokens: 100,
        cache_read_input_tokens: 20_000,
        output_tokens: 50,
      },
    },
    ...extra,
  };
}
function apiError(text: string): Record<string, unknown> {
  return {
    ...main,
    type: "assistant",
    uuid: `e-${clock}`,
    timestamp: at(),
    isApiErrorMessage: true,
    apiErrorStatus: 529,
    error: "server_error",
    message: {
      id: `err-${clock}`,
      role: "assistant",
      model: "<synthetic>",
      content: [{ type: "text", text }],
      stop_reason: "stop_sequence",
      usage: {
        input_tokens: 0,
        output_tokens: 0,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    },
  };
}
function prompt(text: string): Record<string, unknown> {
  return {
    ...main,
    type: "user",
    uuid: `u-${clock}`,
    timestamp: at(),
    message: { role: "user", content: text },
  };
}

type Status = SessionStatusData;
const valid = (f: Pushed) => validationErrors(SessionStatusData, f.data);

async function statusWhere(topic: string, pred: (s: Status) => boolean): Promise<Status> {
  const f = await person.next((p) => p.topic === topic && pred(p.data as Status));
  expect(valid(f)).toEqual([]);
  return f.data as Status;
}

describe("session_status:<sid>", () => {
  it("opens with what the transcript and the files beside it say", async () => {
    const snap = await person.subscribe(`session_status:${SID}`);
    expect(valid(snap)).toEqual([]);
    const s = snap.data as Status;
    expect(s.sid).toBe(SID);
    // The todo file is newer than the transcript's TodoWrite: it wins.
    expect(s.todos.map((t) => [t.subject, t.status])).toEqual([
      ["Add the claim button", "completed"],
      ["Run the tests", "in_progress"],
      ["Open a pull request", "pending"],
    ]);
    expect(s.agent_tree.agents).toEqual([
      expect.objectContaining({
        agent_id: "a7c3e91f04d2b685",
        kind: "subagent",
        agent_type: "Explore",
        description: "Find the claim API",
        state: "completed",
        spawn_depth: 0,
        model: "claude-haiku-4-5",
        children: [],
      }),
    ]);
    expect(s.context).toEqual({
      tokens: 6 + 512 + 17_710,
      model: "claude-opus-4-5-20251101",
      observed_at: Date.parse("2026-11-30T10:01:00.000Z"),
    });
    expect(s.workspace_folders).toEqual([{ name: "widgets", path: "/home/dev/widgets" }]);
    expect(s.api_error).toBeUndefined();
  });

  it("follows appends: a finished half-written line, a new todo list, a background task", async () => {
    const topic = `session_status:${SID}`;
    // Finish the fixture's partial last line (the Bash result), then plan anew.
    const partial = readFileSync(transcript, "utf8").split("\n").at(-1)!;
    expect(partial.length).toBeGreaterThan(0);
    appendFileSync(
      transcript,
      `0000000000000000001","type":"tool_result","content":"ok"}]},"uuid":"u-0016","timestamp":"${at()}"}\n`,
    );
    append(
      assistant([
        {
          type: "tool_use",
          id: "toolu_todo2",
          name: "TodoWrite",
          input: {
            todos: [
              { content: "Fix the flaky test", status: "in_progress", activeForm: "Fixing it" },
              { content: "Push", status: "pending", activeForm: "Pushing" },
            ],
          },
        },
        {
          type: "tool_use",
          id: "toolu_bg1",
          name: "Bash",
          input: {
            command: "npm run watch",
            description: "Watch the build",
            run_in_background: true,
          },
        },
      ]),
    );
    const s = await statusWhere(topic, (v) => v.todos[0]?.subject === "Fix the flaky test");
    expect(s.todos.map((t) => t.status)).toEqual(["in_progress", "pending"]);
    expect(s.background).toEqual([
      expect.objectContaining({
        task_id: "toolu_bg1",
        kind: "bash",
        description: "Watch the build",
        status: "running",
      }),
    ]);
    append({
      ...main,
      type: "user",
      uuid: `r-${clock}`,
      timestamp: at(),
      message: {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_bg1",
            content: "Command running in background with ID: b5k2.",
          },
        ],
      },
      toolUseResult: { backgroundTaskId: "b5k2" },
    });
    append(
      prompt(
        "<task-notification>\n<task-id>b5k2</task-id>\n<status>completed</status>\n<summary>done</summary>\n</task-notification>",
      ),
    );
    const done = await statusWhere(topic, (v) => v.background[0]?.status === "completed");
    expect(done.background[0]).toEqual(
      expect.objectContaining({ task_id: "b5k2", status: "completed", ended_at: clock }),
    );
  });
});

describe("session_errors and api_error", () => {
  it("lists a live session stopped on an API error and drops it when it recovers", async () => {
    const status = `session_status:${SID}`;
    const snap = await person.subscribe("session_errors");
    expect(validationErrors(SessionErrorsData, snap.data)).toEqual([]);
    expect(snap.data).toEqual({ errors: [] });

    append(
      prompt("try again"),
      apiError("API Error: 529 Overloaded. This is a server-side issue."),
    );
    const stuckAt = clock;
    const errors = await person.next(
      (p) => p.topic === "session_errors" && (p.data as { errors: unknown[] }).errors.length > 0,
    );
    expect(validationErrors(SessionErrorsData, errors.data)).toEqual([]);
    expect(errors.data).toEqual({
      errors: [
        {
          sid: SID,
          instance: inst.id,
          text: "API Error: 529 Overloaded. This is a server-side issue.",
          occurred_at: stuckAt,
        },
      ],
    });
    const stuck = await statusWhere(status, (v) => v.api_error !== undefined);
    expect(stuck.api_error).toEqual({
      text: "API Error: 529 Overloaded. This is a server-side issue.",
      occurred_at: stuckAt,
    });

    append(prompt("continue"), assistant([{ type: "text", text: "Back at it." }]));
    await person.next(
      (p) => p.topic === "session_errors" && (p.data as { errors: unknown[] }).errors.length === 0,
    );
    const recovered = await statusWhere(status, (v) => v.api_error === undefined);
    expect(recovered.context?.tokens).toBe(10 + 100 + 20_000);
  });
});

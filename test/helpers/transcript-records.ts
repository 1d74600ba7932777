// Claude Code and Codex transcript records of every documented kind
// (harness.md §6.2, the fixtures in test/fixtures), generated so tests and the
// bench can write realistic files of any length. Shapes follow the fixtures;
// the content is invented. Each `turn(n)` uses ids unique to `n`.

const SID = "3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d";
const BASE = Date.UTC(2026, 10, 30, 10, 0, 0);

function common(uuid: string, parent: string | null, at: number) {
  return {
    parentUuid: parent,
    isSidechain: false,
    userType: "external",
    cwd: "/home/dev/widgets",
    sessionId: SID,
    version: "2.1.292",
    gitBranch: "feat/claim-button",
    uuid,
    timestamp: new Date(at).toISOString(),
  };
}

const usage = {
  input_tokens: 6,
  cache_creation_input_tokens: 512,
  cache_read_input_tokens: 17710,
  output_tokens: 240,
  service_tier: "standard",
};

/** Builders of single records; `n` keeps ids unique, `at` is the instant. */
export const claude = {
  prompt(uuid: string, at: number, text: string, extra: object = {}) {
    return {
      ...common(uuid, null, at),
      type: "user",
      message: { role: "user", content: text },
      ...extra,
    };
  },
  assistant(uuid: string, at: number, messageId: string, content: object[], extra: object = {}) {
    return {
      ...common(uuid, null, at),
      type: "assistant",
      requestId: `req_${messageId}`,
      message: {
        id: messageId,
        type: "message",
        role: "assistant",
        model: "claude-opus-4-5-20251101",
        content,
        stop_reason: "tool_use",
        stop_sequence: null,
        usage,
      },
      ...extra,
    };
  },
  toolUse(id: string, name: string, input: object) {
    return { type: "tool_use", id, name, input };
  },
  result(
    uuid: string,
    at: number,
    toolUseId: string,
    content: unknown,
    toolUseResult?: object,
    isError?: boolean,
  ) {
    return {
      ...common(uuid, null, at),
      type: "user",
      message: {
        role: "user",
        content: [
          {
            tool_use_id: toolUseId,
            type: "tool_result",
            content,
            ...(isError ? { is_error: true } : {}),
          },
        ],
      },
      ...(toolUseResult === undefined ? {} : { toolUseResult }),
    };
  },
  system(uuid: string, at: number, subtype: string, extra: object = {}) {
    return { ...common(uuid, null, at), type: "system", subtype, level: "info", ...extra };
  },
  attachment(uuid: string, at: number, attachment: object) {
    return { ...common(uuid, null, at), type: "attachment", attachment };
  },
};

/** An envelope as ccmsg delivers it (contract §7.5). */
export function envelope(body: string, mid = "0f3a9c2e51b84d7a9e6c1b2d3f4a5b6c/412") {
  const from = "8b2d4e6f-1a3c-4d5e-8f70-9a1b2c3d4e5f";
  return `<cross-session-message from="ccmsg" from-name="widgets-wt/api" from-mode="prompting" ccmsg-mid="${mid}" ccmsg-from="${from}">\n${body}\n\nReply with: ccmsg reply ${mid} --to ${from} <text>\n</cross-session-message>`;
}

/**
 * One turn of a Claude Code session holding every documented record kind:
 * a prompt, thinking streamed as its own record of the same API message,
 * text, calls of every known tool (Task and Agent, an MCP ccmsg send, a Bash
 * `ccmsg post`), an unknown tool, their results, hooks, attachments, slash
 * commands, an interrupt, a caveat, a delivered message, a task
 * notification, an API error, a compaction, and the UI's bookkeeping.
 * Returns JSON lines (no newlines).
 */
export function claudeTurn(n: number, pad = 0): string[] {
  const at = (i: number) => BASE + n * 60_000 + i * 100;
  const u = (i: number) => `t${n}-r${i}`;
  const tu = (name: string) => `toolu_${n}_${name}`;
  const filler = "lorem ipsum ".repeat(Math.ceil(pad / 12)).slice(0, pad);
  const calls: [string, object, unknown, object | undefined][] = [
    [
      "Bash",
      { command: "npm test", description: "Run the tests" },
      "ok",
      { stdout: ` ✓ 212 tests passed ${filler}`, stderr: "", interrupted: false },
    ],
    [
      "Read",
      { file_path: "/home/dev/widgets/web/board.tsx", offset: 1, limit: 40 },
      "     1\texport function Board() {",
      {
        type: "text",
        file: {
          filePath: "/home/dev/widgets/web/board.tsx",
          content: `export function Board() {...} ${filler}`,
          numLines: 3,
          startLine: 1,
          totalLines: 3,
        },
      },
    ],
    [
      "Write",
      { file_path: "/home/dev/widgets/web/claim.tsx", content: "a\nb\nc\n" },
      "File created",
      { type: "create" },
    ],
    [
      "Edit",
      { file_path: "/home/dev/widgets/web/board.tsx", old_string: "x", new_string: "y\nz" },
      "ok",
      { filePath: "/home/dev/widgets/web/board.tsx" },
    ],
    [
      "Grep",
      { pattern: "claim", path: "/home/dev/widgets/src" },
      "src/board/http.ts:88",
      { mode: "content", numFiles: 1, filenames: [], numLines: 1 },
    ],
    [
      "Glob",
      { pattern: "**/*.tsx" },
      "web/board.tsx",
      { filenames: ["web/board.tsx"], numFiles: 1, durationMs: 3, truncated: false },
    ],
    [
      "WebFetch",
      { url: "https://example.invalid/doc", prompt: "summarise" },
      "a summary",
      { result: "a summary", code: 200 },
    ],
    [
      "WebSearch",
      { query: "claim button aria" },
      "results",
      { query: "claim button aria", results: [{}, {}] },
    ],
    [
      "Task",
      {
        description: "Find the claim API",
        prompt: "Where is the claim endpoint defined?",
        subagent_type: "Explore",
      },
      [{ type: "text", text: "POST /api/work-items/:id/claim" }],
      {
        status: "completed",
        agentId: `a${n}c3e91f04d2b685`,
        totalDurationMs: 27400,
        totalTokens: 18211,
      },
    ],
    [
      "Agent",
      {
        description: "Review",
        prompt: "Review the diff",
        name: "reviewer",
        subagent_type: "general-purpose",
      },
      [{ type: "text", text: "Looks good" }],
      { status: "completed", agentId: `b${n}c3e91f04d2b685`, totalDurationMs: 1200 },
    ],
    [
      "SendMessage",
      { to: "reviewer", summary: "ping", message: "are you done?" },
      "sent",
      { routing: "teammate", msg_id: `m${n}` },
    ],
    [
      "Monitor",
      { description: "watch CI", command: "gh run watch", persistent: true, timeout_ms: 60000 },
      "started",
      { taskId: `task${n}` },
    ],
    [
      "Skill",
      { skill: "deploy", args: "--dry-run" },
      "done",
      { status: "completed", background: false },
    ],
    [
      "TodoWrite",
      { todos: [{ content: "Add the claim button", status: "in_progress", activeForm: "Adding" }] },
      "Todos have been modified successfully.",
      { oldTodos: [], newTodos: [] },
    ],
    ["TaskStop", { task_id: `task${n}` }, "stopped", undefined],
    ["CronCreate", { cron: "*/5 * * * *", prompt: "check CI" }, "created", { id: `cron${n}` }],
    [
      "ScheduleWakeup",
      { delaySeconds: 270, reason: "check CI" },
      "Wake-up scheduled in 270s.",
      undefined,
    ],
    [
      "mcp__plugin_ccmsg_ccmsg__send",
      { to: "8b2d4e6f-1a3c-4d5e-8f70-9a1b2c3d4e5f", text: "merged" },
      '{"delivered":true}',
      undefined,
    ],
  ];
  const out: object[] = [];
  let i = 0;
  out.push({
    type: "file-history-snapshot",
    messageId: u(0),
    snapshot: { messageId: u(0), trackedFileBackups: {}, timestamp: new Date(at(0)).toISOString() },
    isSnapshotUpdate: false,
  });
  out.push(
    claude.prompt(u(++i), at(i), `Add a claim button, then run the tests (turn ${n}). ${filler}`),
  );
  out.push(
    claude.attachment(u(++i), at(i), {
      type: "hook_additional_context",
      content: ["held messages: none"],
      hookName: "UserPromptSubmit",
      toolUseID: "",
      hookEvent: "UserPromptSubmit",
    }),
  );
  const msg = `msg_${n}_a`;
  out.push(
    claude.assistant(u(++i), at(i), msg, [
      {
        type: "thinking",
        thinking: `The board lives in web/board.tsx. ${filler}`,
        signature: "EqQBCgIYAhIM...",
      },
    ]),
  );
  // The same API message again, as Claude Code streams it: no new item.
  out.push(
    claude.assistant(u(++i), at(i), msg, [
      {
        type: "thinking",
        thinking: `The board lives in web/board.tsx. ${filler}`,
        signature: "EqQBCgIYAhIM...",
      },
      { type: "text", text: "Reading the board first." },
    ]),
  );
  for (const [name, input] of calls)
    out.push(claude.assistant(u(++i), at(i), msg, [claude.toolUse(tu(name), name, input)]));
  out.push(
    claude.assistant(u(++i), at(i), `msg_${n}_b`, [
      { type: "text", text: "Posting to the API session." },
      claude.toolUse(tu("post"), "Bash", {
        command: "ccmsg post 8b2d4e6f-1a3c-4d5e-8f70-9a1b2c3d4e5f 'schema merged, go ahead'",
      }),
    ]),
  );
  out.push({
    type: "progress",
    uuid: u(++i),
    parentUuid: null,
    timestamp: new Date(at(i)).toISOString(),
    sessionId: SID,
    toolUseID: tu("Bash"),
    data: { type: "bash_progress", output: "running", elapsedTimeSeconds: 1 },
  });
  out.push(
    claude.attachment(u(++i), at(i), {
      type: "hook_success",
      hookName: "PreToolUse:Bash",
      toolUseID: tu("Bash"),
      hookEvent: "PreToolUse",
      content: "",
      stdout: "",
      stderr: "",
      exitCode: 0,
      command: "ccmsg hook pre",
      durationMs: 12,
    }),
  );
  for (const [name, , content, extra] of calls)
    out.push(claude.result(u(++i), at(i), tu(name), content, extra));
  out.push(
    claude.result(u(++i), at(i), tu("post"), "delivered", {
      stdout: "delivered",
      stderr: "",
      interrupted: false,
    }),
  );
  out.push(claude.result(u(++i), at(i), `toolu_${n}_never_called`, "orphan", { stdout: "orphan" }));
  out.push({
    type: "queue-operation",
    operation: "enqueue",
    timestamp: new Date(at(++i)).toISOString(),
    sessionId: SID,
    content: "also check lint",
  });
  out.push(claude.attachment(u(++i), at(i), { type: "queued_command", prompt: "also check lint" }));
  out.push(claude.prompt(u(++i), at(i), envelope(`The API schema is merged (turn ${n}).`)));
  out.push(
    claude.prompt(
      u(++i),
      at(i),
      "<local-command-caveat>Caveat: the messages below were generated by the user while running local commands.</local-command-caveat>",
      { isMeta: true },
    ),
  );
  out.push(
    claude.prompt(
      u(++i),
      at(i),
      "<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args>opus</command-args>",
    ),
  );
  out.push(
    claude.prompt(u(++i), at(i), "<local-command-stdout>Set model to opus</local-command-stdout>"),
  );
  out.push(claude.prompt(u(++i), at(i), "[Request interrupted by user for tool use]"));
  out.push(
    claude.prompt(
      u(++i),
      at(i),
      `<task-notification><task-id>task${n}</task-id><status>completed</status><summary>CI passed</summary></task-notification>`,
      { isMeta: true },
    ),
  );
  out.push(claude.attachment(u(++i), at(i), { type: "todo_reminder", content: [], itemCount: 1 }));
  out.push(
    claude.attachment(u(++i), at(i), {
      type: "hook_blocking_error",
      hookName: "Stop",
      hookEvent: "Stop",
      blockingError: { blockingError: "tests failing", command: "./check.sh" },
    }),
  );
  out.push(
    claude.assistant(
      u(++i),
      at(i),
      `msg_${n}_err`,
      [{ type: "text", text: "API Error: 529 overloaded" }],
      { isApiErrorMessage: true },
    ),
  );
  out.push(
    claude.system(u(++i), at(i), "api_error", {
      error: { message: "overloaded" },
      retryInMs: 500,
      retryAttempt: 1,
    }),
  );
  out.push(
    claude.system(u(++i), at(i), "stop_hook_summary", {
      hookCount: 1,
      hookInfos: [{ command: "ccmsg wait --hook" }],
      hookErrors: [],
      preventedContinuation: false,
      stopReason: "",
      hasOutput: true,
    }),
  );
  out.push(
    claude.system(u(++i), at(i), "compact_boundary", {
      content: "Conversation compacted",
      compactMetadata: { trigger: "auto", preTokens: 155022 },
    }),
  );
  out.push(
    claude.prompt(u(++i), at(i), "This session is being continued from a previous conversation.", {
      isCompactSummary: true,
    }),
  );
  out.push({ type: "summary", summary: "Claim button", leafUuid: u(i) });
  out.push(claude.system(u(++i), at(i), "turn_duration", { durationMs: 1000 }));
  out.push(claude.system(u(++i), at(i), "brand_new_subtype", { content: "?" }));
  out.push({ ...common(u(++i), null, at(i)), type: "brand-new-kind", data: { x: 1 } });
  out.push({ type: "mode", mode: "normal", sessionId: SID });
  out.push({ type: "permission-mode", permissionMode: "default", sessionId: SID });
  out.push({ type: "ai-title", title: "Claim button", sessionId: SID });
  out.push({ type: "custom-title", customTitle: "claims", sessionId: SID });
  out.push({ type: "last-prompt", lastPrompt: "also check lint", sessionId: SID });
  out.push(
    claude.assistant(
      u(++i),
      at(i),
      `msg_${n}_c`,
      [{ type: "text", text: `Done with turn ${n}. ${filler}` }],
      {},
    ),
  );
  return out.map((r) => JSON.stringify(r));
}

/** A Codex rollout turn: session_meta (first turn only), user message with
 * injected context, turn_context, reasoning, a shell call and its output,
 * token counts, the assistant's answer and the UI's echoes. */
export function codexTurn(n: number, thread = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"): string[] {
  const ts = (i: number) => new Date(BASE + n * 60_000 + i * 100).toISOString();
  const call = `call_${n}`;
  const out: object[] = [];
  if (n === 0)
    out.push({
      timestamp: ts(0),
      type: "session_meta",
      payload: {
        id: thread,
        timestamp: ts(0),
        cwd: "/home/dev/widgets-wt/cli",
        originator: "codex_cli_rs",
        cli_version: "0.98.0",
        instructions: null,
        source: "cli",
        model_provider: "openai",
      },
    });
  out.push({
    timestamp: ts(1),
    type: "response_item",
    payload: {
      type: "message",
      role: "user",
      content: [
        {
          type: "input_text",
          text: "<environment_context>\n  <cwd>/home/dev/widgets-wt/cli</cwd>\n</environment_context>",
        },
      ],
    },
  });
  out.push({
    timestamp: ts(2),
    type: "response_item",
    payload: {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: `Add \`widgets claim\` (turn ${n}).` }],
    },
  });
  out.push({
    timestamp: ts(2),
    type: "event_msg",
    payload: { type: "user_message", message: `Add \`widgets claim\` (turn ${n}).`, kind: "plain" },
  });
  out.push({
    timestamp: ts(3),
    type: "turn_context",
    payload: {
      cwd: "/home/dev/widgets-wt/cli",
      approval_policy: "on-request",
      sandbox_policy: { mode: "workspace-write" },
      model: "gpt-5-codex",
      effort: "high",
      summary: "auto",
    },
  });
  out.push({
    timestamp: ts(4),
    type: "response_item",
    payload: {
      type: "reasoning",
      summary: [{ type: "summary_text", text: "**Locating the CLI entry point**" }],
      encrypted_content: "gAAAAABo...",
    },
  });
  out.push({
    timestamp: ts(5),
    type: "response_item",
    payload: {
      type: "function_call",
      name: "shell",
      arguments: JSON.stringify({
        command: ["bash", "-lc", "rg -n claim src/cli"],
        workdir: "/home/dev/widgets-wt/cli",
      }),
      call_id: call,
    },
  });
  out.push({
    timestamp: ts(6),
    type: "response_item",
    payload: {
      type: "function_call_output",
      call_id: call,
      output: JSON.stringify({
        output: "src/cli/main.ts:12: // TODO claim\n",
        metadata: { exit_code: 0, duration_seconds: 0.1 },
      }),
    },
  });
  out.push({
    timestamp: ts(7),
    type: "event_msg",
    payload: {
      type: "token_count",
      info: {
        total_token_usage: { input_tokens: 10240, output_tokens: 512, total_tokens: 10752 },
        model_context_window: 272000,
      },
    },
  });
  out.push({
    timestamp: ts(8),
    type: "response_item",
    payload: {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "Added `widgets claim`; tests pass." }],
    },
  });
  out.push({
    timestamp: ts(8),
    type: "event_msg",
    payload: { type: "agent_message", message: "Added `widgets claim`; tests pass." },
  });
  return out.map((r) => JSON.stringify(r));
}

/** Codex records beyond a plain turn: a delivered message, an interrupt, an
 * error, a compaction, a resume, an orphan output, an unknown kind. */
export function codexExtras(): string[] {
  const ts = new Date(BASE + 3_600_000).toISOString();
  return [
    {
      timestamp: ts,
      type: "response_item",
      payload: {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: envelope("from codex") }],
      },
    },
    { timestamp: ts, type: "event_msg", payload: { type: "turn_aborted", reason: "interrupted" } },
    {
      timestamp: ts,
      type: "event_msg",
      payload: { type: "error", message: "stream disconnected" },
    },
    { timestamp: ts, type: "compacted", payload: { message: "summary of the thread" } },
    {
      timestamp: ts,
      type: "session_meta",
      payload: { id: "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5" },
    },
    {
      timestamp: ts,
      type: "response_item",
      payload: { type: "function_call_output", call_id: "call_never", output: "x" },
    },
    {
      timestamp: ts,
      type: "response_item",
      payload: {
        type: "custom_tool_call",
        name: "apply_patch",
        input: "*** Begin Patch",
        call_id: "call_patch",
      },
    },
    {
      timestamp: ts,
      type: "response_item",
      payload: { type: "custom_tool_call_output", call_id: "call_patch", output: "Done" },
    },
    { timestamp: ts, type: "brand_new", payload: { x: 1 } },
  ].map((r) => JSON.stringify(r));
}

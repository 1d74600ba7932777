import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ATTENTION_INPUT_MAX_CHARS } from "../../src/contract/attention.js";
import {
  maskSecrets,
  permissionAnswer,
  readPermissionRequest,
} from "../../src/harness/permission-request.js";

// Payloads recorded from the real Claude Code 2.1.328 (DR-0062).
const hooks = join(import.meta.dirname, "..", "fixtures", "claude-code", "hooks");
const payload = (name: string) =>
  JSON.parse(readFileSync(join(hooks, name), "utf8")) as Record<string, unknown>;

describe("a PermissionRequest read", () => {
  it("keeps the tool, its input, the cwd and the harness's suggestions of a Bash prompt", () => {
    const ask = readPermissionRequest(payload("permission-request-bash.json"))!;
    expect(ask).toMatchObject({
      sid: "e0257caa-5c1c-412b-9674-aab164fab30f",
      kind: "permission",
      tool: "Bash",
      cwd: "/tmp/perm-probe/run-6UO5lA/cwd",
      truncated: false,
      suggestions: [
        {
          type: "addDirectories",
          directories: ["/tmp/perm-probe/run-6UO5lA/cwd"],
          destination: "session",
        },
      ],
    });
    expect(JSON.parse(ask.input)).toEqual({
      command: "echo ran > /tmp/perm-probe/run-6UO5lA/cwd/ran.txt",
      description: "write a file",
    });
  });

  it("reads AskUserQuestion as a question with its options", () => {
    const ask = readPermissionRequest(payload("permission-request-question.json"))!;
    expect(ask.kind).toBe("question");
    expect(ask.questions).toEqual([
      {
        question: "Which color should the button be?",
        header: "Color",
        multi_select: false,
        options: [
          { label: "Red", description: "warm" },
          { label: "Blue", description: "cool" },
        ],
      },
    ]);
  });

  it("is nothing without a session or a tool", () => {
    expect(readPermissionRequest({ tool_name: "Bash" })).toBeUndefined();
    expect(readPermissionRequest({ session_id: "s" })).toBeUndefined();
  });

  it("never shows a secret of the input, and bounds what it shows", () => {
    const ask = readPermissionRequest({
      session_id: "s",
      tool_name: "Bash",
      tool_input: {
        command:
          "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123 curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc' https://ana:hunter22@example.com && npm publish --otp 123456",
        env: { API_KEY: "plain-value", path: "/usr/bin" },
      },
    })!;
    for (const secret of ["ghp_abc", "eyJhbGci", "hunter22", "123456", "plain-value"])
      expect(ask.input).not.toContain(secret);
    expect(ask.input).toContain("/usr/bin");
    expect(ask.input).toContain("curl");
    // What is kept for the answer is the input as given.
    expect((ask.rawInput.env as Record<string, string>).API_KEY).toBe("plain-value");

    const long = readPermissionRequest({
      session_id: "s",
      tool_name: "Write",
      tool_input: { file_path: "/x", content: "é".repeat(10_000) },
    })!;
    expect([...long.input]).toHaveLength(ATTENTION_INPUT_MAX_CHARS);
    expect(long.truncated).toBe(true);
  });

  it("masks provider keys wherever they stand", () => {
    expect(maskSecrets("use sk-ant-api03-abcdefghijklmnop now")).toBe("use ••• now");
    expect(maskSecrets("aws AKIAABCDEFGHIJKLMNOP")).toBe("aws •••");
    expect(maskSecrets("DB_PASSWORD='s3cret pass' make")).toBe("DB_PASSWORD=••• make");
    expect(maskSecrets("ls -la /tmp")).toBe("ls -la /tmp");
  });
});

describe("the answer to a PermissionRequest", () => {
  const bash = () => readPermissionRequest(payload("permission-request-bash.json"))!;

  it("allows, in the shape Claude Code reads", () => {
    expect(permissionAnswer(bash(), { behavior: "allow" })).toEqual({
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } },
    });
  });

  it("denies with the person's message, which the model receives", () => {
    expect(permissionAnswer(bash(), { behavior: "deny", message: "use ls" })).toEqual({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: "use ls" },
      },
    });
  });

  it("always-allows with the harness's own suggestions, unchanged", () => {
    const out = permissionAnswer(bash(), { behavior: "allow", always: true }) as {
      hookSpecificOutput: { decision: { updatedPermissions: unknown } };
    };
    expect(out.hookSpecificOutput.decision.updatedPermissions).toEqual(bash().suggestions);
  });

  it("answers a question with its input plus the chosen labels", () => {
    const ask = readPermissionRequest(payload("permission-request-question.json"))!;
    const answers = { "Which color should the button be?": "Blue" };
    const out = permissionAnswer(ask, { behavior: "allow", answers }) as {
      hookSpecificOutput: { decision: { updatedInput: Record<string, unknown> } };
    };
    expect(out.hookSpecificOutput.decision.updatedInput).toEqual({ ...ask.rawInput, answers });
  });
});

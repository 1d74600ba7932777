import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TranscriptItem } from "../../src/contract/transcripts.js";
import { type FoldHarness, newSessionFold } from "../../src/harness/fold-state.js";
import { foldLines } from "../../src/harness/session-fold.js";
import { classifyAll } from "../../src/harness/transcript-classifier.js";
import { readLines, type TranscriptLine } from "../../src/harness/transcript-lines.js";
import { ROOT } from "../helpers/instance.js";
import { claudeTurn, codexExtras, codexTurn } from "../helpers/transcript-records.js";

// The session fold and the typed items read the same raw records and pair
// calls with results by one set of rules (harness/tool-pairs.ts): what
// `session_status` shows as still running is what `transcript_items` shows
// as a call without its result, and both count the same calls.

const FIX = join(ROOT, "test", "fixtures");
const CLAUDE = join(FIX, "claude-code", "config-home", "projects", "-home-dev-widgets");
const SID = "3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d";
const ROLLOUT = join(
  FIX,
  "codex",
  "codex-home",
  "sessions/2026/11/30/rollout-2026-11-30T11-00-00-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl",
);

async function fileLines(path: string): Promise<TranscriptLine[]> {
  const out: TranscriptLine[] = [];
  for await (const batch of readLines(path)) out.push(...batch);
  return out;
}

function asLines(records: string[]): TranscriptLine[] {
  let offset = 0;
  return records.map((text) => {
    const line = { text, offset, bytes: Buffer.byteLength(text) + 1, record: JSON.parse(text) };
    offset += line.bytes;
    return line;
  });
}

/** What each reader made of the calls: the fold's state, the items' links. */
function pairs(harness: FoldHarness, lines: TranscriptLine[], agent = false) {
  const fold = newSessionFold(harness, agent);
  foldLines(fold, lines);
  const { items } = classifyAll(harness, lines);
  const uses = items.filter(
    (i) => i.type.startsWith("tool:") && (i as { role?: string }).role === "use",
  ) as (TranscriptItem & { tool_use_id: string; result_item?: string })[];
  return {
    fold: {
      calls: fold.toolTotal,
      open: Object.keys(fold.pending).sort(),
      agents: fold.agents.length,
    },
    items: {
      calls: uses.length,
      open: uses
        .filter((u) => u.result_item === undefined)
        .map((u) => u.tool_use_id)
        .sort(),
      agents: items.filter((i) => i.type === "message:sub:out").length,
    },
  };
}

/** A Codex local shell call written with its `id` and no `call_id` (as
 * for chat-completions providers), answered; then one still running. */
function localShellById(): TranscriptLine[] {
  const at = "2026-11-30T11:00:04.000Z";
  return asLines(
    [
      {
        type: "local_shell_call",
        id: "lsh_1",
        call_id: null,
        status: "completed",
        action: { type: "exec", command: ["bash", "-lc", "ls"] },
      },
      { type: "function_call_output", call_id: "lsh_1", output: "a\nb\n" },
      {
        type: "local_shell_call",
        id: "lsh_2",
        status: "in_progress",
        action: { type: "exec", command: ["bash", "-lc", "sleep 9"] },
      },
    ].map((payload) => JSON.stringify({ timestamp: at, type: "response_item", payload })),
  );
}

describe("the fold and the typed items", () => {
  it("count the same calls and leave the same ones open: fixtures, generated turns, a Codex local shell call known by its id", async () => {
    const cases: [FoldHarness, TranscriptLine[], boolean][] = [
      ["claude", await fileLines(join(CLAUDE, `${SID}.jsonl`)), false],
      [
        "claude",
        await fileLines(join(CLAUDE, SID, "subagents", "agent-a7c3e91f04d2b685.jsonl")),
        true,
      ],
      ["codex", await fileLines(ROLLOUT), false],
      ["claude", asLines([0, 1, 2].flatMap((n) => claudeTurn(n))), false],
      ["codex", asLines([...[0, 1, 2].flatMap((n) => codexTurn(n)), ...codexExtras()]), false],
      ["codex", localShellById(), false],
    ];
    for (const [harness, lines, agent] of cases) {
      const { fold, items } = pairs(harness, lines, agent);
      expect(fold.calls).toBeGreaterThan(0);
      expect(items).toEqual(fold);
    }
    expect(pairs("codex", localShellById()).items).toEqual({
      calls: 2,
      open: ["lsh_2"],
      agents: 0,
    });
  });
});

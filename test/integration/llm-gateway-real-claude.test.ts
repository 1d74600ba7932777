import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlmRequestInfo } from "../../src/contract/llm.js";
import { FakeModel } from "../helpers/fake-model.js";
import type { TestInstance } from "../helpers/instance.js";
import { type GatewayProcess, llmInstance, startGatewayCli } from "../helpers/llm.js";
import { contractViolations, Peer } from "../helpers/peer.js";
import { CLAUDE, claudeSetup } from "../helpers/real-claude.js";

// Issue 13 item 3 with the real Claude Code (2.1.328): pointed at `ccmsg
// gateway` by ANTHROPIC_BASE_URL, its answer arrives through the gateway and
// the instance learns its session's warm series from what the harness sends.

let inst: TestInstance;
let model: FakeModel;
let gw: GatewayProcess;

beforeAll(async () => {
  inst = await llmInstance({ sources: { local: { token: "local-token-0123456789" } } });
  model = await FakeModel.start(() => ({ text: "through the gateway" }));
  gw = await startGatewayCli(inst, model.url);
}, 30_000);

afterAll(async () => {
  await gw?.stop();
  await model?.close();
  await inst?.stop();
  expect(contractViolations.splice(0)).toEqual([]);
});

describe("the real Claude Code behind ccmsg gateway", () => {
  it("gets its answer through, and its session's series shows in llm_requests", async () => {
    const cwd = join(inst.env.HOME!, "proj");
    mkdirSync(cwd, { recursive: true });
    const env = claudeSetup(
      { HOME: inst.env.HOME!, CLAUDE_CONFIG_DIR: inst.env.CLAUDE_CONFIG_DIR! },
      cwd,
      gw.url,
    );
    const person = await Peer.unix(inst.socket);
    await person.helloUser();
    await person.subscribe("llm_requests");
    const run = spawn(CLAUDE, ["-p", "hello", "--output-format", "json"], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    run.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => run.on("exit", resolve));
    expect(code).toBe(0);
    const { session_id: sid, result } = JSON.parse(out) as { session_id: string; result: string };
    expect(result).toBe("through the gateway");
    // The harness named its session in a header; the model saw the same.
    expect(model.requests.some((r) => r.sid === sid)).toBe(true);
    const frame = await person.next(
      (f) =>
        f.topic === "llm_requests" &&
        (f.data as LlmRequestInfo[]).some((r) => r.sid === sid && r.status === 200),
    );
    const row = (frame.data as LlmRequestInfo[]).find((r) => r.sid === sid)!;
    expect(row.main).toBe(true);
    expect(row.model).toBe(model.requests.find((r) => r.sid === sid)!.body.model);
    // Claude Code marks its prompt for caching with the default lifetime.
    expect(row.cache_ttl_secs).toBe(300);
    person.close();
  }, 60_000);
});

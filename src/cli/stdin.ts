import { type Flags, sessionId } from "../client/flags.js";

/** Read the whole of stdin as JSON (hook payloads), with a deadline. */
export async function readStdinJson(deadlineMs: number): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  const read = new Promise<void>((resolve) => {
    process.stdin.on("data", (c: Buffer) => chunks.push(c));
    process.stdin.on("end", resolve);
    process.stdin.on("error", resolve);
  });
  await Promise.race([read, new Promise((r) => setTimeout(r, deadlineMs).unref())]);
  process.stdin.destroy();
  const text = Buffer.concat(chunks).toString("utf8").trim();
  if (text === "") return {};
  const value = JSON.parse(text) as unknown;
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}

/** A non-empty string field of a hook payload, else undefined. */
export function payloadString(payload: Record<string, unknown>, key: string): string | undefined {
  const v = payload[key];
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** Whom a hook speaks for: `--sid`, else the payload's `session_id`, else the
 * environment's session (harness spec §8). */
export function hookSid(flags: Flags, payload: Record<string, unknown>): string | undefined {
  return flags.sid || payloadString(payload, "session_id") || sessionId(flags);
}

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

export { hookSid, payloadString } from "../client/hook-payload.js";

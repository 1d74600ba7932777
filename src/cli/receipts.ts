import { connectInstance, greet } from "../client/connect.js";
import { sessionId } from "../client/flags.js";
import { receiptsTopic, sendAndWait } from "../client/receipts.js";
import { ContractError } from "../contract/errors.js";
import type { Receipt } from "../contract/receipts.js";
import type { OpArgs } from "../contract/schemas.js";
import type { Command } from "./command.js";
import { parse, print, wantsJson } from "./options.js";

// Receipts in the CLI (DR-0054): `post … --wait seen[:timeout]` waits until
// the recipient's transcript shows the message as its model's input, and
// `ccmsg sent` lists recent sends with what became of them.

/** How long `--wait seen` waits without a timeout of its own. */
const DEFAULT_WAIT_MS = 120_000;

/** `seen`, `seen:30`, `seen:30s`, `seen:500ms`, `seen:2m` → the wait in ms. */
export function parseWait(value: string): number {
  const m = /^seen(?::(\d+)(ms|s|m)?)?$/.exec(value);
  if (m === null)
    throw new ContractError(
      "invalid_args",
      `--wait takes seen[:timeout] (e.g. seen:30s), not ${value}`,
    );
  if (m[1] === undefined) return DEFAULT_WAIT_MS;
  const n = Number(m[1]);
  return m[2] === "ms" ? n : m[2] === "m" ? n * 60_000 : n * 1000;
}

/** `message_send` with `--wait seen`: prints the receipt, or fails with a
 * line on stderr saying what the message's state is when time ran out. */
export async function sendWaitingSeen(
  values: Parameters<typeof sessionId>[0] & { json?: boolean; text?: boolean },
  args: OpArgs<"message_send">,
  wait: string,
  command: string,
): Promise<void> {
  const waitMs = parseWait(wait);
  const sid = sessionId(values);
  const client = await connectInstance(values);
  let out: Awaited<ReturnType<typeof sendAndWait>>;
  try {
    await greet(client, sid);
    out = await sendAndWait(client, sid, args, waitMs);
  } finally {
    client.close();
  }
  const { result, receipt, seen } = out;
  print(values, { ...result, ...(receipt === undefined ? {} : { receipt }) }, () =>
    receipt === undefined
      ? result.delivered
        ? "delivered"
        : `held (${result.reason})`
      : line(receipt),
  );
  if (seen) return;
  const state = receipt === undefined ? (result.delivered ? "delivered" : "held") : receipt.state;
  const why = receipt?.why === undefined ? "" : ` (${receipt.why})`;
  process.stderr.write(
    `ccmsg ${command}: not seen by the recipient's model within ${waitMs / 1000} s; it is ${state}${why}${receipt ? `, mid ${receipt.mid}` : ""}\n`,
  );
  process.exit(1);
}

/** One receipt as a line. */
function line(r: Receipt): string {
  const at = (t: number | undefined) => (t === undefined ? "" : new Date(t).toISOString());
  const what =
    r.state === "read"
      ? `read (seen ${at(r.seen_at)}, answered ${at(r.read_at)})`
      : r.state === "seen"
        ? `seen by the model at ${at(r.seen_at)}`
        : r.state === "delivered"
          ? `delivered at ${at(r.delivered_at)}, not seen yet`
          : r.state;
  const how = r.route === undefined ? "" : ` by ${r.route}`;
  const why = r.why === undefined || r.state === "read" || r.state === "seen" ? "" : ` — ${r.why}`;
  return `${r.mid} → ${r.to}: ${what}${how}${why}`;
}

/** `ccmsg sent [--limit n]` — the recent sends of this session (or, as the
 * person, every recent message) with what became of each. */
export const sent: Command = async (argv) => {
  const { values } = parse(argv, { limit: { type: "string" } }, "ccmsg sent [--limit n]");
  const limit = values.limit === undefined ? 20 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new ContractError("invalid_args", "--limit takes a positive whole number");
  const sid = sessionId(values);
  const topic = receiptsTopic(sid);
  const client = await connectInstance(values);
  try {
    const snapshot = new Promise<Receipt[]>((resolve, reject) => {
      client.onPushed((p) => {
        if (p.ev === "topic" && p.topic === topic && p.snapshot)
          resolve((p.data as { receipts: Receipt[] }).receipts);
      });
      client.onClose(() =>
        reject(new ContractError("instance_unreachable", "the instance ended the connection")),
      );
    });
    await greet(client, sid);
    await client.call("topic_subscribe", { topic });
    const receipts = (await snapshot).slice(-limit).reverse();
    if (wantsJson(values)) print(values, { receipts }, () => "");
    else
      print(values, { receipts }, () =>
        receipts.length === 0 ? "(none)" : receipts.map(line).join("\n"),
      );
  } finally {
    client.close();
  }
};

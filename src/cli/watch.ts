import { ContractError } from "../contract/errors.js";
import type { LastLiveSession, PeerInfo } from "../contract/peers.js";
import { connectInstance, greet, sendGreeting } from "./connect.js";
import type { Command } from "./main.js";
import { parse, print, sessionId } from "./options.js";

/** `ccmsg peers` — the sessions connected now and those lately lost. Greets as
 * the session when one is known, so rows answer for this session. */
export const peers: Command = async (argv) => {
  const { values } = parse(argv, {}, "ccmsg peers");
  const client = await connectInstance(values);
  const snapshot = new Promise<{ peers: PeerInfo[]; last_live: LastLiveSession[] }>((resolve) => {
    client.onPushed((p) => {
      if (p.ev === "topic" && p.topic === "peers" && p.snapshot) resolve(p.data as never);
    });
  });
  const { reply: greeting } = await sendGreeting(client, sessionId(values));
  const sub = client.call("topic_subscribe", { topic: "peers" });
  sub.catch(() => {});
  await greeting;
  await sub;
  const data = await snapshot;
  client.close();
  print(values, data, () => {
    const lines: string[] = [];
    const row = (
      sid: string,
      state: string | undefined,
      r: { repo: string; ws: string; branch?: string; title?: string },
    ) =>
      `${sid.slice(0, 8)}  ${(state ?? "").padEnd(14)} ${(r.repo || r.ws ? `${r.repo}/${r.ws}` : "(location unknown)").padEnd(32)} ${(r.branch ?? "").padEnd(20)} ${r.title ?? ""}`.trimEnd();
    lines.push(data.peers.length ? "connected:" : "no connected sessions");
    for (const p of data.peers) lines.push(`  ${row(p.sid, p.state, p)}`);
    if (data.last_live.length) lines.push("lately lost:");
    for (const l of data.last_live) lines.push(`  ${row(l.sid, l.state, l)}`);
    return lines.join("\n");
  });
};

/** `ccmsg subscribe <topic>…` — stream frames as NDJSON until interrupted or
 * until the instance goes away. */
export const subscribe: Command = async (argv) => {
  const { values, positionals } = parse(argv, {}, "ccmsg subscribe <topic>…");
  if (positionals.length === 0)
    throw new ContractError("invalid_args", "usage: ccmsg subscribe <topic>…");
  const client = await connectInstance(values);
  client.onPushed((p) => process.stdout.write(`${JSON.stringify(p)}\n`));
  await greet(client, sessionId(values));
  for (const topic of positionals) await client.call("topic_subscribe", { topic });
  await new Promise<void>((resolve) => {
    client.onClose(resolve);
    process.once("SIGINT", () => {
      client.close();
      resolve();
    });
  });
};

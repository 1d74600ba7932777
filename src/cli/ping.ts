import { connectInstance } from "../client/connect.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";

export const ping: Command = async (argv) => {
  const { values } = parse(argv, {}, "ccmsg ping");
  const client = await connectInstance(values);
  const r = await client.call("instance_ping");
  client.close();
  print(values, r, () => {
    const up = Math.round((Date.now() - r.started_at) / 1000);
    return `instance ${r.instance} (ccmsg ${r.version}) pid ${r.pid}, up ${up}s, ${r.clients} client(s)${r.http.length ? `, http ${r.http.join(" ")}` : ""}`;
  });
};

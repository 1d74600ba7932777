import { callAs, connectInstance, greet } from "../client/connect.js";
import { ContractError } from "../contract/errors.js";
import type { KvEntry } from "../contract/kv.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";

const USAGE =
  "ccmsg kv get <ns> <key> | set <ns> <key> <value> [--string] | del <ns> <key> | list <ns>";

/** `ccmsg kv …` — the key-value store. A value is read as JSON when it parses
 * (`42`, `{"a":1}`), else as a string; `--string` always takes it as text. */
export const kv: Command = async (argv) => {
  const { values, positionals } = parse(argv, { string: { type: "boolean" } }, USAGE);
  const [verb, ns, key, ...rest] = positionals;
  if (ns === undefined || (verb !== "list" && key === undefined)) {
    throw new ContractError("invalid_args", `usage: ${USAGE}`);
  }
  const client = await connectInstance(values);
  // The store is the person's (the contract opens kv ops to the user role
  // only): inside a session too, `ccmsg kv` speaks as the person.
  const sid = undefined;
  try {
    switch (verb) {
      case "get": {
        const r = await callAs(client, sid, "kv_read", { ns, key: key ?? "" });
        print(values, r, () => JSON.stringify(r.value, null, 2));
        return;
      }
      case "set": {
        if (key === undefined || rest.length === 0)
          throw new ContractError("invalid_args", `usage: ${USAGE}`);
        const text = rest.join(" ");
        const r = await callAs(client, sid, "kv_write", {
          ns,
          key,
          value: values.string ? text : asJson(text),
        });
        print(values, r, () => `set ${ns}/${key}`);
        return;
      }
      case "del": {
        await callAs(client, sid, "kv_delete", { ns, key: key ?? "" });
        print(values, {}, () => `deleted ${ns}/${key}`);
        return;
      }
      case "list": {
        const entries = new Promise<KvEntry[]>((resolve, reject) => {
          client.onPushed((p) => {
            if (p.ev === "topic" && p.topic === `kv:${ns}` && p.snapshot)
              resolve((p.data as { entries: KvEntry[] }).entries);
          });
          client.onClose(() =>
            reject(new ContractError("instance_unreachable", "the instance ended the connection")),
          );
        });
        await greet(client, sid);
        await client.call("topic_subscribe", { topic: `kv:${ns}` });
        const list = await entries;
        print(values, { entries: list }, () =>
          list.length === 0
            ? "(empty)"
            : list
                .map((e) => `${e.key} = ${JSON.stringify("value" in e ? e.value : null)}`)
                .join("\n"),
        );
        return;
      }
      default:
        throw new ContractError("invalid_args", `usage: ${USAGE}`);
    }
  } finally {
    client.close();
  }
};

function asJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

import { connectInstance } from "../client/connect.js";
import { ContractError } from "../contract/errors.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";

const USAGE = "ccmsg passkey add [--name label] | list | remove <sub>";

interface Added {
  url: string;
  code: string;
  sub: string;
  expires_at: number;
}
interface Listed {
  passkeys: {
    sub: string;
    credential_id: string;
    endpoint: string;
    issued_label?: string;
    device_label?: string;
    registered_at: number;
    registered_ip?: string;
    last_used_at?: number;
    last_used_ip?: string;
  }[];
}

/**
 * `ccmsg passkey …` — people who may use the console from anywhere (DR-0044),
 * through administrative frames on the local socket: access to the socket is
 * the administrator's proof. Never starts an instance: a registration URL
 * lives in the running instance's memory.
 */
export const passkey: Command = async (argv) => {
  // `ccmsg daemon passkey add <unit> …` (the contract's spelling) arrives here
  // with the unit still in front; this instance is the only unit.
  const { values, positionals } = parse(argv, { name: { type: "string" } }, USAGE);
  const [verb, ...rest] = positionals;
  const client = await connectInstance(values, { start: false });
  const call = async <T>(op: string, args: object): Promise<T> => {
    const { ok, request_id: _r, error, ...result } = await client.send(op, args);
    if (!ok) throw new ContractError(error?.code ?? "internal_error", error?.msg ?? "failed");
    return result as T;
  };
  try {
    switch (verb) {
      case "add": {
        const r = await call<Added>(
          "admin_passkey_add",
          values.name === undefined ? {} : { name: values.name },
        );
        const minutes = Math.round((r.expires_at - Date.now()) / 60_000);
        print(values, { url: r.url, code: r.code, sub: r.sub, expires_at: r.expires_at }, () =>
          [
            `Open this URL on the device to register (valid ${minutes} minutes, once):`,
            `  ${r.url}`,
            `and enter this code there: ${r.code}`,
            `(it registers a passkey for ${r.sub})`,
          ].join("\n"),
        );
        return;
      }
      case "list": {
        const r = await call<Listed>("admin_passkey_list", {});
        print(values, r, () =>
          r.passkeys.length === 0
            ? "no passkeys (add one with: ccmsg passkey add)"
            : r.passkeys
                .map(
                  (p) =>
                    `${p.sub}  ${p.device_label ?? p.issued_label ?? "(no label)"}  registered ${new Date(p.registered_at).toISOString()}${p.registered_ip ? ` from ${p.registered_ip}` : ""}${p.last_used_at ? `, last used ${new Date(p.last_used_at).toISOString()}${p.last_used_ip ? ` from ${p.last_used_ip}` : ""}` : ""}  ${p.endpoint}`,
                )
                .join("\n"),
        );
        return;
      }
      case "remove": {
        const sub = rest[0];
        if (sub === undefined) throw new ContractError("invalid_args", `usage: ${USAGE}`);
        const r = await call<{ sub: string; removed: number }>("admin_passkey_remove", { sub });
        print(
          values,
          r,
          () => `removed ${r.removed} passkey(s) of ${r.sub}; their sessions are closed`,
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

/**
 * The contract's spelling, `daemon passkey add <unit> [endpoint] [--webui
 * url] [--name label]` and `remove <sub> [unit]`, as this command's
 * arguments: this instance is the one unit, and its console is its web UI, so
 * the unit, endpoint and `--webui` name nothing to choose.
 */
export function contractSpelling(argv: string[]): string[] {
  const [action, ...args] = argv;
  const positional: string[] = [];
  const flags: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const valued = a === "--name" || a === "--webui" || a === "--state-dir";
    if (a.startsWith("-")) {
      if (a !== "--webui" && !a.startsWith("--webui=")) flags.push(a);
      if (valued && i + 1 < args.length) {
        if (a !== "--webui") flags.push(args[i + 1]!);
        i++;
      }
    } else positional.push(a);
  }
  if (action === undefined) return [];
  return action === "remove" ? [action, ...positional.slice(0, 1), ...flags] : [action, ...flags];
}

import { callAs, connectInstance } from "../client/connect.js";
import { ContractError } from "../contract/errors.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";
import { sidArg } from "./sid-args.js";

const USAGE =
  "ccmsg dump <sid> [--preset p] [--types a,b,-c] [--agent id] [--no-thinking] [--no-agent]";

/** `ccmsg dump <sid> …` — write a typed dump of a session's transcript on the
 * instance's host (`session_dump_write`, a person's op) and say where. */
export const dump: Command = async (argv) => {
  const { values, positionals } = parse(
    joinTypes(argv),
    {
      preset: { type: "string" },
      types: { type: "string" },
      agent: { type: "string" },
      "no-thinking": { type: "boolean" },
      "no-agent": { type: "boolean" },
    },
    USAGE,
  );
  const [typed, ...extra] = positionals;
  if (typed === undefined || extra.length > 0)
    throw new ContractError("invalid_args", `usage: ${USAGE}`);
  const sid = await sidArg(values, typed, "the session");
  const types = values.types
    ?.split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");
  const client = await connectInstance(values);
  try {
    // A dump is the person's op (contract §4.3.3): inside a session too.
    const r = await callAs(client, undefined, "session_dump_write", {
      sid,
      ...(values.preset === undefined ? {} : { preset: values.preset }),
      ...(types === undefined ? {} : { types }),
      ...(values.agent === undefined ? {} : { agent_id: values.agent }),
      ...(values["no-thinking"] ? { no_thinking: true } : {}),
      ...(values["no-agent"] ? { no_agent: true } : {}),
    });
    print(values, r, () => {
      const counts = Object.entries(r.entries).sort(
        (a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1),
      );
      const total = counts.reduce((n, [, c]) => n + c, 0);
      const lines = [`${r.path}`, `${total} item(s), ${r.bytes} bytes`];
      for (const [type, n] of counts) lines.push(`  ${String(n).padStart(6)}  ${type}`);
      if (r.ids.length > 0) {
        const kinds = new Map<string, number>();
        for (const e of r.ids) kinds.set(e.kind, (kinds.get(e.kind) ?? 0) + 1);
        lines.push(`ids: ${[...kinds].map(([k, n]) => `${n} ${k}`).join(", ")}`);
      }
      return lines.join("\n");
    });
  } finally {
    client.close();
  }
};

/** `--types -thinking` reads as a missing value to node's parser (a value may
 * not start with `-`); a selection often does, so it is joined as `--types=…`. */
function joinTypes(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = argv[i + 1];
    if (arg === "--") return [...out, ...argv.slice(i)];
    if (arg === "--types" && value !== undefined && value.startsWith("-") && value !== "--") {
      out.push(`--types=${value}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

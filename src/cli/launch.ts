import { resolve } from "node:path";
import { callAs, connectInstance } from "../client/connect.js";
import { ContractError } from "../contract/errors.js";
import type { LauncherConfigReadResult, LauncherRunResult } from "../contract/launcher.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";

const USAGE =
  "ccmsg launch [<dir>] [--template t] [--param NAME=value]… [--command c] | launch --list";

/** `ccmsg launch` — start a session through the instance's launcher
 * (`launcher_run`, a person's op), or list its roots and templates. */
export const launch: Command = async (argv) => {
  const { values, positionals } = parse(
    argv,
    {
      template: { type: "string" },
      param: { type: "string", multiple: true },
      command: { type: "string" },
      list: { type: "boolean" },
    },
    USAGE,
  );
  if (positionals.length > 1 || (values.list && positionals.length > 0))
    throw new ContractError("invalid_args", `usage: ${USAGE}`);
  const client = await connectInstance(values);
  try {
    if (values.list) {
      const r: LauncherConfigReadResult = await callAs(
        client,
        undefined,
        "launcher_config_read",
        {},
      );
      return print(values, r, () =>
        [
          `roots: ${r.root_dirs.join(", ")}`,
          ...r.templates.flatMap((t, i) => [
            `${t.name}${i === 0 ? " (default)" : ""}: ${t.command}`,
            ...t.params.map(
              (p) => `  ${p.name}${p.default === "" ? "" : ` (default ${p.default})`}`,
            ),
          ]),
        ].join("\n"),
      );
    }
    const params: Record<string, string> = {};
    for (const p of (values.param as unknown as string[] | undefined) ?? []) {
      const eq = p.indexOf("=");
      if (eq <= 0) throw new ContractError("invalid_args", `--param ${p}: give NAME=value`);
      params[p.slice(0, eq)] = p.slice(eq + 1);
    }
    const r: LauncherRunResult = await callAs(client, undefined, "launcher_run", {
      cwd: resolve(positionals[0] ?? "."),
      params,
      ...(values.template === undefined ? {} : { template: values.template }),
      ...(values.command === undefined ? {} : { command: values.command }),
    });
    if (r.timed_out || r.exit_code !== 0) process.exitCode = 1;
    print(values, r, () => {
      const end = r.timed_out
        ? "gave up waiting (timed out)"
        : r.exit_code === undefined
          ? "ended by a signal"
          : r.exit_code === 0
            ? ""
            : `exit ${r.exit_code}`;
      return [r.stdout.trimEnd(), r.stderr.trimEnd(), end].filter((l) => l !== "").join("\n");
    });
  } finally {
    client.close();
  }
};

import { readFile } from "node:fs/promises";
import { connect } from "node:net";
import { UsageError } from "../client/flags.js";
import { loadConfig } from "../config/config.js";
import {
  DEFAULT_GATEWAY_LISTEN,
  DEFAULT_GATEWAY_UPSTREAM,
  LOCAL_LLM_SOURCE,
} from "../config/llm.js";
import { ContractError } from "../contract/errors.js";
import { startGateway } from "../gateway/proxy.js";
import { Reporter, type ReportTarget } from "../gateway/reporter.js";
import { isLoopbackHost, parseHostPort } from "../net/address.js";
import { readOwnerSecret } from "../state/owner-credential.js";
import { configFile, resolveStateDir, stateFiles } from "../state/paths.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";

/**
 * `ccmsg gateway [--listen host:port] [--upstream url]`: the LLM pass-through
 * (gateway/proxy.ts) in the foreground, reporting to the instance of its
 * state directory through the webhook source `llm.gateway.source` (default
 * `local`) with that source's token. With no config at all it reports as
 * `local` to this user's own instance, proving itself with the owner
 * credential as every command does; a named source the config lacks is
 * not reported to, and it says so.
 */
export const gateway: Command = async (argv) => {
  if (argv[0] === "env") return gatewayEnv(argv.slice(1));
  const { values, positionals } = parse(
    argv,
    { listen: { type: "string" }, upstream: { type: "string" } },
    "ccmsg gateway [--listen host:port] [--upstream url]",
  );
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
  const config = loadConfig(configFile(undefined)).llm;
  const listen = values.listen ?? config?.gateway?.listen ?? DEFAULT_GATEWAY_LISTEN;
  const { host, port } = parseHostPort(listen);
  // Whoever reaches the port spends through it with their own key, and sees
  // what it answers: loopback unless asked.
  if (!isLoopbackHost(host))
    process.stderr.write(`ccmsg gateway: listening beyond loopback (${host}), as asked\n`);
  let upstream: URL;
  try {
    upstream = new URL(values.upstream ?? config?.gateway?.upstream ?? DEFAULT_GATEWAY_UPSTREAM);
    if (upstream.protocol !== "http:" && upstream.protocol !== "https:") throw new Error();
  } catch {
    throw new UsageError("--upstream: an http(s) URL");
  }
  const sourceName = config?.gateway?.source ?? LOCAL_LLM_SOURCE;
  const files = stateFiles(resolveStateDir(values["state-dir"]));
  // The configured source's token; else, for `local`, the owner's secret
  // (read at each report: an instance started later mints it then).
  const configured = config?.sources[sourceName];
  const token =
    configured !== undefined
      ? () => configured.token
      : sourceName === LOCAL_LLM_SOURCE
        ? () => readOwnerSecret(files.ownerSecret)
        : undefined;
  const instanceJson = files.instanceJson;
  const warn = (msg: string) => process.stderr.write(`ccmsg gateway: ${msg}\n`);
  const find = async (): Promise<ReportTarget | undefined> => {
    const bearer = token?.();
    if (bearer === undefined) return undefined;
    try {
      const http = (JSON.parse(await readFile(instanceJson, "utf8")) as { http?: unknown }).http;
      return typeof http === "string"
        ? { url: `${http}webhook/${encodeURIComponent(sourceName)}`, token: bearer }
        : undefined;
    } catch {
      return undefined;
    }
  };
  const reporter = new Reporter(find, warn);
  const running = await startGateway({
    host,
    port,
    upstream,
    report: token === undefined ? () => {} : (e) => reporter.add(e),
    workerUrl: new URL("./gateway-worker.js", import.meta.url),
  });
  const reporting = token === undefined ? null : sourceName;
  print(values, { listen: running.address, upstream: upstream.href, source: reporting }, () =>
    [
      `ccmsg gateway on http://${running.address}/ → ${upstream.href}`,
      reporting === null
        ? `  not reporting: no webhook source "${sourceName}" in llm.sources of ${configFile(undefined)}`
        : configured === undefined
          ? "  reporting to this user's instance (source local, the owner credential)"
          : `  reporting to the instance as webhook source "${sourceName}"`,
      `  point a session at it: ANTHROPIC_BASE_URL=http://${running.address}`,
    ].join("\n"),
  );
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await running.close();
  await reporter.flush();
};

/** How long `gateway env` waits for the gateway's port to answer. */
const PROBE_TIMEOUT_MS = 1_000;

/**
 * `ccmsg gateway env [--listen host:port]`: the `ANTHROPIC_BASE_URL` that
 * points a session at the gateway (`eval "$(ccmsg gateway env)"; claude`),
 * printed only when something listens there — so a stopped gateway leaves
 * the shell as it was and sessions go straight to the API, instead of
 * failing every request.
 */
async function gatewayEnv(argv: string[]): Promise<void> {
  const { values, positionals } = parse(
    argv,
    { listen: { type: "string" } },
    "ccmsg gateway env [--listen host:port]",
  );
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
  const config = loadConfig(configFile(undefined)).llm;
  const listen = values.listen ?? config?.gateway?.listen ?? DEFAULT_GATEWAY_LISTEN;
  const { host, port } = parseHostPort(listen);
  // A gateway on every interface is reached on loopback from here.
  const reach = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  const url = `http://${reach.includes(":") ? `[${reach}]` : reach}:${port}`;
  if (!(await answers(reach, port)))
    throw new ContractError(
      "not_found",
      `nothing listens at ${url} (start it: ccmsg gateway); ANTHROPIC_BASE_URL left as it is`,
    );
  // Text into a pipe too (unlike other commands): `$(…)` is a pipe, and
  // what it is read by is a shell. JSON only when asked.
  process.stdout.write(
    values.json === true
      ? `${JSON.stringify({ ANTHROPIC_BASE_URL: url })}\n`
      : `export ANTHROPIC_BASE_URL=${url}\n`,
  );
}

/** Whether a TCP connection to host:port is accepted. */
function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: PROBE_TIMEOUT_MS });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once("connect", () => done(true));
    socket.once("timeout", () => done(false));
    socket.once("error", () => done(false));
  });
}

import { readFile } from "node:fs/promises";
import { isLoopbackHost, parseHostPort } from "../address.js";
import { loadConfig } from "../config.js";
import { startGateway } from "../gateway/proxy.js";
import { Reporter, type ReportTarget } from "../gateway/reporter.js";
import { DEFAULT_GATEWAY_LISTEN, DEFAULT_GATEWAY_UPSTREAM } from "../llm-config.js";
import { configFile, resolveStateDir, stateFiles } from "../paths.js";
import type { Command } from "./main.js";
import { parse, print, UsageError } from "./options.js";

const DEFAULT_SOURCE = "local";

/**
 * `ccmsg gateway [--listen host:port] [--upstream url]`: the LLM pass-through
 * (gateway/proxy.ts) in the foreground, reporting to the instance of its
 * state directory through the webhook source `llm.gateway.source` (default
 * `local`). Without that source in the config it still forwards, and says
 * that nothing is reported.
 */
export const gateway: Command = async (argv) => {
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
  const sourceName = config?.gateway?.source ?? DEFAULT_SOURCE;
  const source = config?.sources[sourceName];
  const instanceJson = stateFiles(resolveStateDir(values["state-dir"])).instanceJson;
  const warn = (msg: string) => process.stderr.write(`ccmsg gateway: ${msg}\n`);
  const find = async (): Promise<ReportTarget | undefined> => {
    if (source === undefined) return undefined;
    try {
      const http = (JSON.parse(await readFile(instanceJson, "utf8")) as { http?: unknown }).http;
      return typeof http === "string"
        ? { url: `${http}webhook/${encodeURIComponent(sourceName)}`, token: source.token }
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
    report: source === undefined ? () => {} : (e) => reporter.add(e),
    workerUrl: new URL("./gateway-worker.js", import.meta.url),
  });
  const reporting = source === undefined ? null : sourceName;
  print(values, { listen: running.address, upstream: upstream.href, source: reporting }, () =>
    [
      `ccmsg gateway on http://${running.address}/ → ${upstream.href}`,
      reporting === null
        ? `  not reporting: no webhook source "${sourceName}" in llm.sources of ${configFile(undefined)}`
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

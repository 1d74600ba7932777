import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { pathToFileURL } from "node:url";
import { connectInstance } from "../client/connect.js";
import { contractError } from "../contract/errors.js";
import { writeFileAtomic } from "../state/atomic-write.js";
import { OPEN_TOKEN_LIFETIME_MS, readOwnerSecret, signInUrl } from "../state/owner-credential.js";
import { resolveStateDir, stateFiles } from "../state/paths.js";
import type { Command } from "./command.js";
import { parse, print, wantsJson } from "./options.js";

const USAGE = "ccmsg open [--print] [--json]";

/**
 * `ccmsg open` — a one-time sign-in link to the instance's console: opening
 * it sets the owner's cookie in that browser. The link is minted here from
 * the owner secret (reading it is the proof), for this run of the instance,
 * and lives OPEN_TOKEN_LIFETIME_MS. A browser is launched only for readable
 * output without `--print`, and only when one is found (`BROWSER`, else
 * `xdg-open` under a graphical session, else macOS `open`).
 */
export const open: Command = async (argv) => {
  const { values } = parse(argv, { print: { type: "boolean" } }, USAGE);
  const stateDir = resolveStateDir(values["state-dir"]);
  const files = stateFiles(stateDir);
  const client = await connectInstance(values);
  const ping = await client.call("instance_ping");
  client.close();
  const address = ping.http[0];
  if (address === undefined)
    throw contractError(
      "capability_unavailable",
      "this instance serves no HTTP (started with --http off, or its port was taken): restart it with --http host:port",
    );
  const now = Date.now();
  const secret = readOwnerSecret(files.ownerSecret);
  if (secret === undefined)
    throw contractError("internal_error", `cannot read the owner secret at ${files.ownerSecret}`);
  const url = signInUrl(
    secret,
    { instance: ping.instance, startedAt: ping.started_at },
    address,
    now,
  );
  const result = { url, expires_at: now + OPEN_TOKEN_LIFETIME_MS };
  const browser = values.print || wantsJson(values) ? undefined : findBrowser();
  if (browser !== undefined) {
    // The link goes through a private page, never on a command line where
    // any account could read it (`ps`, /proc) and spend it first.
    writeFileAtomic(files.openPage, redirectPage(url));
    const target = pathToFileURL(files.openPage).href;
    const child = spawn(browser.command, [...browser.args, target], {
      detached: true,
      stdio: "ignore",
    });
    child.on("error", () => {});
    child.unref();
  }
  const minutes = OPEN_TOKEN_LIFETIME_MS / 60_000;
  print(values, result, () =>
    [
      browser === undefined ? "Open the console:" : "Opening the console in your browser:",
      `  ${url}`,
      `(a one-time link, valid for ${minutes} minutes; it signs that browser in as the owner)`,
    ].join("\n"),
  );
};

function redirectPage(url: string): string {
  const attr = url.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
  return `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0;url=${attr}"><title>ccmsg</title><p><a href="${attr}">Open the ccmsg console</a></p>\n`;
}

/** The command that opens a URL here, if there is one. */
function findBrowser(env = process.env): { command: string; args: string[] } | undefined {
  const [command, ...args] = (env.BROWSER?.split(delimiter)[0] ?? "").trim().split(/\s+/);
  if (command) return { command, args };
  if (process.platform === "darwin") return { command: "open", args: [] };
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return undefined;
  return onPath("xdg-open", env) ? { command: "xdg-open", args: [] } : undefined;
}

function onPath(name: string, env: NodeJS.ProcessEnv): boolean {
  return (env.PATH ?? "").split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

import { access } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply } from "fastify";

/**
 * The web console's files (built by Vite into `dist/web/`), served by the
 * instance on the same origin as `/ws` and `/api` — behind the same Host,
 * Origin and owner checks as every route (gate.ts runs those first).
 *
 * Paths are matched on their end, like `/ws`, so a reverse proxy may add a
 * prefix: `…/` is the page, `…/assets/<file>` its hashed files (immutable),
 * `…/favicon.svg` the icon. Anything else is not the console's.
 */

/** No inline script or style, no eval, nothing from another origin: the page
 * talks only to its own instance (`connect-src 'self'` covers the same
 * origin's `ws:`). Markup content never reaches `innerHTML` in the page's
 * code either; this is the second wall. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

/** A year: asset names carry their content hash, so a changed file is a new
 * name. `private`: every answer needs the owner's credential. */
const ASSET_CACHE = "private, max-age=31536000, immutable";
/** The page itself names the current assets: always asked again. */
const PAGE_CACHE = "no-cache";

/** The console's hashed files: no data in them (the gate lets them past
 * while passkeys are in use, as the sign-in page's). */
export const ASSET_PATH = /\/assets\/([A-Za-z0-9_.-]+)$/;
const ICON_PATH = /\/favicon\.svg$/;

interface ConsoleFiles {
  /** Answer a GET for the console, or undefined when the path is not its. */
  answer(path: string, reply: FastifyReply): FastifyReply | undefined;
}

/**
 * The console's files as the listener's encapsulated plugin, with the one
 * catch-all GET: the console's paths, 426 at a WebSocket path (a plain
 * request there), 404 for anything else. `dir` is where the built console
 * is (default: found beside the build).
 */
export async function consoleFilesPlugin(
  app: FastifyInstance,
  options: { dir?: string },
): Promise<void> {
  const files = await consoleFiles(app, options.dir);
  app.get("/*", async (req, reply) => {
    const path = req.url.split("?")[0]!;
    if (path.endsWith("/ws")) return reply.code(426).send({ ok: false, error: "upgrade required" });
    return files.answer(path, reply) ?? reply.code(404).send({ ok: false, error: "not found" });
  });
}

/**
 * Register the file server (`reply.sendFile`, no routes of its own) and
 * return what answers the console's paths. Without a built console (a build
 * without Vite) the page answers 404 saying so.
 */
async function consoleFiles(app: FastifyInstance, dir?: string): Promise<ConsoleFiles> {
  const root = dir ?? (await builtConsoleDir());
  if (root === undefined) {
    return {
      answer(path, reply) {
        if (!path.endsWith("/")) return undefined;
        return reply
          .code(404)
          .send({ ok: false, error: "the web console was not built (npm run build)" });
      },
    };
  }
  await app.register(fastifyStatic, { root, serve: false, index: false, dotfiles: "deny" });
  // `send` would write its own Cache-Control; each kind of file says its own.
  const send = (reply: FastifyReply, file: string, cache: string) =>
    reply
      .headers(SECURITY_HEADERS)
      .header("cache-control", cache)
      .sendFile(file, { cacheControl: false });
  return {
    answer(path, reply) {
      if (path.endsWith("/")) return send(reply, "index.html", PAGE_CACHE);
      const asset = ASSET_PATH.exec(path)?.[1];
      if (asset !== undefined && !asset.startsWith("."))
        return send(reply, `assets/${asset}`, ASSET_CACHE);
      if (ICON_PATH.test(path)) return send(reply, "favicon.svg", "private, max-age=86400");
      return undefined;
    },
  };
}

/**
 * Where the build put the console: beside the bundled command
 * (`dist/bin/…` → `dist/web`), or — for code run from `src/` by tests and
 * tools — the checkout's `dist/web`.
 */
async function builtConsoleDir(): Promise<string | undefined> {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, "..", "web"), join(here, "..", "..", "..", "dist", "web")]) {
    try {
      await access(join(candidate, "index.html"));
      return candidate;
    } catch {}
  }
  return undefined;
}

import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import type { Logger } from "../../util/logger.js";
import { isRefusal } from "../files/checked-open.js";
import { codeOf } from "../files/op-codes.js";
import { openForRead, type SurfaceDeps } from "../files/session-surfaces.js";
import { normalizeRelative } from "../files/surfaces.js";
import { decodeText, readHead } from "../files/text.js";
import { typeByExtension, typeBySniff } from "./content-type.js";
import { type Grant, type SandboxGrants, tokenMatches } from "./grants.js";

// The sandbox origin (contract §4.3.5, DR-0042): what answers a request whose
// Host is a live grant's `<gid>.sandbox.localhost:<port>`. It never reaches
// the console's stack — no owner credential, cookie, route or plugin of the
// console is looked at here — and the grant's token, the first path segment,
// is what authorizes. The rest of the path is relative to the granted file's
// directory, so a page's relative links (`style.css`, `img/a.png`) stay under
// the grant; each one runs `file_read`'s check again before it is opened.

/** What every answer carries: the document is sandboxed (no script, form,
 * popup, plugin or navigation of others), loads nothing but its own grant
 * origin's files, is never framed, cached or sniffed, and leaks no token in a
 * Referer. `allow-same-origin` keeps the document on its grant's origin
 * rather than an opaque one: without scripts that origin can do nothing, and
 * it is what lets CORP `same-origin` admit the page's own relative files
 * while refusing every other page that would embed them (DR-0042). */
export const SANDBOX_HEADERS: Record<string, string> = {
  "content-security-policy": [
    "sandbox allow-same-origin",
    "default-src 'none'",
    "img-src 'self' data:",
    "media-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; "),
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
  "cross-origin-resource-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

/** Bytes sniffed to tell text from binary when no extension names a type. */
const SNIFF_BYTES = 512;

export interface SandboxServeDeps {
  grants: SandboxGrants;
  surfaces: SurfaceDeps;
  log: Logger;
}

/** The handler for a sandbox Host, or undefined when `host` names no live
 * grant (the console's Host rule then answers it). */
export function sandboxHost(
  deps: SandboxServeDeps,
): (host: string | undefined) => ((req: IncomingMessage, res: ServerResponse) => void) | undefined {
  return (host) => {
    const grant = deps.grants.forHost(host);
    if (grant === undefined) return undefined;
    return (req, res) => {
      serve(deps, grant, req, res).catch((error: unknown) => {
        deps.log.error({ err: error, gid: grant.gid }, "sandbox request failed");
        if (!res.headersSent) refuse(res, 500, "internal_error", "the instance failed");
        else res.destroy();
      });
    };
  };
}

function refuse(res: ServerResponse, status: number, code: string, error: string): void {
  // The JSON refusal every HTTP route of the instance answers.
  const refusal = { ok: false, code, error };
  const body = `${JSON.stringify(refusal)}\n`;
  res.writeHead(status, {
    ...SANDBOX_HEADERS,
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

async function serve(
  deps: SandboxServeDeps,
  grant: Grant,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("allow", "GET, HEAD");
    return refuse(res, 405, "bad_request", "the sandbox answers GET and HEAD only");
  }
  // Only the grant's own pages may send a request with an Origin here.
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== deps.grants.origin(grant))
    return refuse(res, 403, "forbidden", "Origin is not this sandbox");
  const url = new URL(req.url ?? "/", deps.grants.origin(grant));
  const slash = url.pathname.indexOf("/", 1);
  const offered = slash < 0 ? url.pathname.slice(1) : url.pathname.slice(1, slash);
  // A wrong or missing token looks like nothing there.
  if (slash < 0 || !tokenMatches(grant, offered))
    return refuse(res, 404, "not_found", "nothing here");
  let rest: string;
  try {
    rest = decodeURIComponent(url.pathname.slice(slash + 1));
  } catch {
    return refuse(res, 404, "not_found", "not a path");
  }
  // Decoded first, then made canonical: `%2F..%2F` climbs no further than `..`.
  const rel = normalizeRelative(rest);
  if (rel === undefined || rel === "")
    return refuse(res, 403, "path_forbidden", "outside this grant");
  const target = grant.dir === "" ? rel : grant.dir === "/" ? `/${rel}` : `${grant.dir}/${rel}`;
  const read = await openForRead(deps.surfaces, grant.sid, grant.kind, target);
  if (isRefusal(read)) {
    // `file_read`'s own codes: not_found, else path_forbidden.
    const code = codeOf("file_read", read);
    return refuse(res, code === "not_found" ? 404 : 403, code, read.msg);
  }
  const { fh, stats } = read.opened;
  let handedOver = false;
  try {
    const size = stats.size;
    const type =
      typeByExtension(target) ??
      typeBySniff(
        decodeText(await readHead(fh, Math.min(size, SNIFF_BYTES)), size > SNIFF_BYTES) !==
          undefined,
      );
    const range = parseRange(req.headers.range, size);
    if (range === "unsatisfiable") {
      res.setHeader("content-range", `bytes */${size}`);
      return refuse(res, 416, "invalid_args", "range not satisfiable");
    }
    const name = rel.slice(rel.lastIndexOf("/") + 1);
    const disposition = url.searchParams.has("download") ? "attachment" : "inline";
    const headers: Record<string, string | number> = {
      ...SANDBOX_HEADERS,
      "content-type": type,
      "accept-ranges": "bytes",
      "content-disposition": `${disposition}; filename="${asciiName(name)}"; filename*=UTF-8''${encodeURIComponent(name)}`,
    };
    const [start, end] = range ?? [0, size - 1];
    if (range !== undefined) headers["content-range"] = `bytes ${start}-${end}/${size}`;
    headers["content-length"] = size === 0 ? 0 : end - start + 1;
    res.writeHead(range === undefined ? 200 : 206, headers);
    if (req.method === "HEAD" || size === 0) {
      res.end();
      return;
    }
    // Read from the proven descriptor, never from the path again.
    handedOver = true;
    await pipeline(fh.createReadStream({ start, end, autoClose: true }), res).catch(() => {
      // The browser went away mid-file: nothing to answer.
    });
  } finally {
    if (!handedOver) await fh.close();
  }
}

/** One `bytes=` range (`a-b`, `a-`, `-n`) as inclusive offsets; undefined
 * for no header or one this server answers whole (several ranges, another
 * unit, a malformed one); "unsatisfiable" past the end. */
export function parseRange(
  header: string | undefined,
  size: number,
): [number, number] | "unsatisfiable" | undefined {
  const m = header === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (m === null) return undefined;
  const [, a, b] = m;
  if (a === "" && b === "") return undefined;
  if (a === "") {
    const n = Number(b);
    if (n === 0) return "unsatisfiable";
    return size === 0 ? "unsatisfiable" : [Math.max(0, size - n), size - 1];
  }
  const start = Number(a);
  const end = b === "" ? size - 1 : Math.min(Number(b), size - 1);
  if (b !== "" && Number(b) < start) return undefined;
  if (start >= size) return "unsatisfiable";
  return [start, end];
}

/** A filename for the plain `filename=` parameter: printable ASCII, no quote
 * or backslash (the `filename*` beside it carries the real name). */
function asciiName(name: string): string {
  return name.replace(/[^\x20-\x7e]|["\\]/g, "_");
}

import { request } from "node:http";

/** Each test instance's owner secret, by origin (`http://127.0.0.1:<port>`):
 * the helpers present it as the owner's own tools do. */
const ownerSecrets = new Map<string, string>();

export function rememberOwner(base: string, secret: string): void {
  ownerSecrets.set(new URL(base).host, secret);
}

/** `Authorization: Bearer <secret>` for an instance's URL (http or ws). */
export function ownerHeaders(url: string): Record<string, string> {
  const secret = ownerSecrets.get(new URL(url).host);
  return secret === undefined ? {} : { authorization: `Bearer ${secret}` };
}

export interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
  ms: number;
}

/** A JSON request over a fresh connection; `ms` is the wall time to the answer. */
export async function http(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<HttpReply> {
  const t0 = performance.now();
  const res = await fetch(new URL(path.replace(/^\//, ""), base), {
    method,
    headers: {
      ...ownerHeaders(base),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: Object.fromEntries(res.headers.entries()),
    body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>),
    ms: performance.now() - t0,
  };
}

/** Start a POST and return a handle that can drop the connection before the
 * answer, as a browser closing its tab would. */
export function postThenDrop(
  base: string,
  path: string,
  body: unknown,
): { drop(): void; done: Promise<void> } {
  const url = new URL(path.replace(/^\//, ""), base);
  const payload = JSON.stringify(body);
  const req = request(url, {
    method: "POST",
    headers: {
      ...ownerHeaders(base),
      "content-type": "application/json",
      "content-length": Buffer.byteLength(payload),
    },
  });
  const done = new Promise<void>((resolve) => {
    req.on("error", () => resolve());
    req.on("close", () => resolve());
  });
  req.end(payload);
  return { drop: () => req.destroy(), done };
}

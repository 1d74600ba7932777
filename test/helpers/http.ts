import { request } from "node:http";

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
    headers: body === undefined ? {} : { "content-type": "application/json" },
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
    headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
  });
  const done = new Promise<void>((resolve) => {
    req.on("error", () => resolve());
    req.on("close", () => resolve());
  });
  req.end(payload);
  return { drop: () => req.destroy(), done };
}

import { request } from "node:http";

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: Record<string, unknown>;
}

/** A request with exactly the headers given (a browser's Origin,
 * Sec-Fetch-Site, a cookie, a spoofed X-Forwarded-For): nothing is added but
 * Host and, for a body, its type and length. */
export function rawRequest(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<RawReply> {
  const url = new URL(path.replace(/^\//, ""), base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers: {
          ...headers,
          ...(payload === undefined
            ? {}
            : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          text += c;
        });
        res.on("end", () => {
          let json: Record<string, unknown> = {};
          try {
            json = JSON.parse(text) as Record<string, unknown>;
          } catch {}
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** The refresh cookie's `name=value` out of a Set-Cookie header. */
export function refreshCookieOf(reply: RawReply): string | undefined {
  const set = reply.headers["set-cookie"];
  const first = (Array.isArray(set) ? set : set === undefined ? [] : [set]).find((c) =>
    /^(?:__Secure-)?ccmsg-[0-9a-f]{16}=/.test(c),
  );
  return first?.split(";")[0];
}

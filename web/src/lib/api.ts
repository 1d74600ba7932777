import { bearer } from "../conn/bearer.js";
import { person, refresh } from "../conn/person.js";

/** A refusal of the instance's HTTP API: its status, its code when it has
 * one (`STATE_STORE_BUSY`, a contract code) and, for 503, when to retry. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }

  /** The instance could not take it now; the same request may be retried. */
  get busy(): boolean {
    return this.status === 503;
  }
}

/**
 * A JSON request to the instance's HTTP API (the control pane's `/api/…`
 * and the console's `/api/console/…`), relative to the page so a reverse
 * proxy's prefix is kept. The owner's cookie goes with it (same origin).
 */
export async function api<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  try {
    return await once<T>(method, path, body);
  } catch (error) {
    // A person's access token ran out (the tab slept): one refresh, one retry.
    if (
      !(error instanceof ApiError) ||
      error.code !== "auth_expired" ||
      person.peek() === undefined
    )
      throw error;
    if ((await refresh("expiring")) === undefined) throw error;
    return once<T>(method, path, body);
  }
}

async function once<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(new URL(path, location.href), {
      method,
      credentials: "same-origin",
      cache: "no-store",
      headers: {
        ...bearer(),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "the instance did not answer");
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === "" ? {} : JSON.parse(text);
  } catch {
    parsed = { error: text.slice(0, 200) };
  }
  if (res.ok) return parsed as T;
  const p = parsed as { error?: string; code?: string };
  const retry = Number(res.headers.get("retry-after"));
  throw new ApiError(
    res.status,
    p.error ?? `HTTP ${res.status}`,
    p.code,
    Number.isFinite(retry) && retry > 0 ? retry * 1000 : undefined,
  );
}

/**
 * `api`, retried while the instance answers 503 (`STATE_STORE_BUSY`: another
 * writer holds the lock, or both mutation slots are taken) — after the
 * `Retry-After` it names, at most `tries` times. `onBusy` hears each wait, so
 * the page can say "busy, retrying".
 */
export async function apiRetrying<T>(
  method: "GET" | "POST",
  path: string,
  body: unknown,
  onBusy: (retryAt: number, attempt: number) => void,
  tries = 5,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await api<T>(method, path, body);
    } catch (error) {
      if (!(error instanceof ApiError) || !error.busy || attempt >= tries) throw error;
      const wait = error.retryAfterMs ?? 1000;
      onBusy(Date.now() + wait, attempt);
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

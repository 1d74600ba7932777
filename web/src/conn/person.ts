import { signal } from "@preact/signals";
import { startAuthentication, startRegistration } from "@simplewebauthn/browser";
import type { AuthChallenge, AuthSession } from "../../../src/contract/auth.js";

/**
 * A person signed in with a passkey (contract §9): the access token lives in
 * this page's memory only; the refresh token is an HttpOnly cookie the
 * instance set, which scripts never see. The token opens the WebSocket as the
 * `ccmsg.token.<token>` subprotocol and goes with API requests as a Bearer.
 */
export const person = signal<AuthSession | undefined>(undefined);

/** A refusal of an auth route: the contract code and its message. */
export class AuthError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function post<T>(path: string, body: unknown, bearer?: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(new URL(path, location.href), {
      method: "POST",
      credentials: "same-origin",
      cache: "no-store",
      headers: {
        "content-type": "application/json",
        ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
      },
      body: JSON.stringify(body),
    });
  } catch {
    throw new AuthError("instance_unreachable", "the instance did not answer");
  }
  const parsed = (await res.json().catch(() => ({}))) as {
    ok?: boolean;
    error?: { code: string; msg: string } | string;
    code?: string;
  };
  if (res.ok) return parsed as T;
  const error =
    typeof parsed.error === "object"
      ? parsed.error
      : { code: parsed.code ?? "internal_error", msg: parsed.error ?? `HTTP ${res.status}` };
  throw new AuthError(error.code, error.msg);
}

const challenge = () => post<AuthChallenge & { ok: true }>("auth/challenge", {});

/** Set while this browser holds a refresh cookie (which scripts cannot
 * see), so a page load asks for a token only when there may be one. */
const MARK = "ccmsg-person";

function adopt(session: AuthSession): AuthSession {
  localStorage.setItem(MARK, session.sub);
  person.value = { sub: session.sub, access: session.access };
  schedule();
  return session;
}

/** Register this device's passkey with a registration URL's token and code. */
export async function register(token: string, code: string, label: string): Promise<AuthSession> {
  const c = await challenge();
  // The WebAuthn user id is fixed per registration URL, so a retry (a
  // mistyped code after the passkey was made) replaces this device's first
  // passkey instead of leaving an orphan beside it.
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)),
  );
  const userId = btoa(String.fromCharCode(...digest.slice(0, 16)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
  const created = await startRegistration({
    optionsJSON: {
      challenge: c.challenge,
      rp: { id: location.hostname, name: "ccmsg" },
      user: { id: userId, name: label || "ccmsg", displayName: label || "ccmsg" },
      pubKeyCredParams: [-7, -257, -8].map((alg) => ({ type: "public-key" as const, alg })),
      authenticatorSelection: { residentKey: "required", userVerification: "required" },
      attestation: "none",
      timeout: 120_000,
    },
  });
  return adopt(
    await post<AuthSession>("auth/register", {
      token,
      code,
      ...(label === "" ? {} : { device_label: label.slice(0, 128) }),
      challenge: { challenge: c.challenge, issuer: c.issuer, expires_at: c.expires_at },
      credential: {
        id: created.id,
        raw_id: created.rawId,
        client_data_json: created.response.clientDataJSON,
        attestation_object: created.response.attestationObject,
      },
    }),
  );
}

/** Sign in with a passkey this browser's authenticator holds. */
export async function signIn(): Promise<AuthSession> {
  const c = await challenge();
  const got = await startAuthentication({
    optionsJSON: {
      challenge: c.challenge,
      rpId: location.hostname,
      userVerification: "required",
      timeout: 120_000,
    },
  });
  return adopt(
    await post<AuthSession>("auth/assert", {
      challenge: { challenge: c.challenge, issuer: c.issuer, expires_at: c.expires_at },
      credential: {
        raw_id: got.rawId,
        client_data_json: got.response.clientDataJSON,
        authenticator_data: got.response.authenticatorData,
        signature: got.response.signature,
        ...(got.response.userHandle === undefined ? {} : { user_handle: got.response.userHandle }),
      },
    }),
  );
}

/** A new access token from the refresh cookie; undefined when there is none
 * (never signed in here, signed out, or the owner's cookie is used instead). */
export async function refresh(
  reason: "reload" | "expiring" | "reconnect",
): Promise<AuthSession | undefined> {
  if (localStorage.getItem(MARK) === null) return undefined;
  try {
    return adopt(await post<AuthSession>("auth/refresh", { reason }));
  } catch (error) {
    // Refused for good (revoked, expired, signed out elsewhere): forget it.
    if (error instanceof AuthError && error.code.startsWith("auth_")) localStorage.removeItem(MARK);
    return undefined;
  }
}

/** End this browser's session: its token family dies at the instance. */
export async function signOut(): Promise<void> {
  const held = person.peek();
  clearTimeout(timer);
  localStorage.removeItem(MARK);
  person.value = undefined;
  if (held !== undefined) await post("api/auth/signout", {}, held.access.value).catch(() => {});
}

/** A registration URL and code for another device of the person signed in. */
export function addDevice(): Promise<{ url: string; code: string; expires_at: number }> {
  const held = person.peek();
  if (held === undefined) return Promise.reject(new AuthError("forbidden", "not signed in"));
  return post("api/auth/add-device", {}, held.access.value);
}

let timer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<(session: AuthSession) => void>();

/** Hear every new access token (the wire moves its deadline with it). */
export function onRefreshed(listener: (session: AuthSession) => void): void {
  listeners.add(listener);
}

/** Refresh when a third of the token's life is left. */
function schedule(): void {
  clearTimeout(timer);
  const held = person.peek();
  if (held === undefined) return;
  const left = held.access.expires_at - Date.now();
  timer = setTimeout(
    async () => {
      const next = await refresh("expiring");
      if (next !== undefined) for (const l of listeners) l(next);
    },
    Math.max(1000, (left * 2) / 3),
  );
}

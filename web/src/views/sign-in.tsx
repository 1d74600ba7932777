import { useState } from "preact/hooks";
import { wire } from "../app-state.js";
import { AuthError, register, signIn } from "../conn/person.js";

function why(error: unknown): string {
  if (error instanceof AuthError) {
    if (error.code === "auth_expired") return "That has expired: start again.";
    if (error.code === "auth_invalid") return `Not accepted: ${error.message}`;
    return error.message;
  }
  // The browser's own refusal (the person cancelled, no passkey here).
  return error instanceof Error ? error.message : String(error);
}

/** What a browser without a credential sees: sign in with a passkey, or
 * (on the instance's own machine) the owner's one-time link. */
export function SignInPage() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const go = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await signIn();
      wire.retryNow();
    } catch (e) {
      setError(why(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="sign-in" aria-labelledby="sign-in-title" data-page="sign-in">
      <h1 id="sign-in-title">Sign in</h1>
      <p>
        <button type="button" class="primary" disabled={busy} onClick={() => void go()}>
          Sign in with a passkey
        </button>
      </p>
      {error !== undefined && (
        <p class="banner banner-bad" role="alert" data-sign-in-error>
          {error}
        </p>
      )}
      <p>
        No passkey yet? Ask whoever runs the instance to run <code>ccmsg passkey add</code> and open
        the URL it prints on this device. On the instance's own machine, <code>ccmsg open</code>{" "}
        signs this browser in as its owner.
      </p>
    </section>
  );
}

/** The page a registration URL (`#register=<token>`) lands on: the code the
 * administrator was shown, a name for this device, then the passkey. */
export function RegisterPage({ token, done }: { token: string; done(): void }) {
  const [code, setCode] = useState("");
  const [label, setLabel] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await register(token, code.trim(), label.trim());
      done();
      wire.retryNow();
    } catch (err) {
      setError(why(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="sign-in" aria-labelledby="register-title" data-page="register">
      <h1 id="register-title">Add a passkey</h1>
      <form onSubmit={(e) => void submit(e)}>
        <p>
          <label>
            Code (6 digits, shown where the URL was made){" "}
            <input
              name="code"
              inputMode="numeric"
              autoComplete="one-time-code"
              pattern="[0-9]{6}"
              required
              value={code}
              onInput={(e) => setCode((e.target as HTMLInputElement).value)}
            />
          </label>
        </p>
        <p>
          <label>
            This device's name (optional){" "}
            <input
              name="device"
              maxLength={128}
              value={label}
              onInput={(e) => setLabel((e.target as HTMLInputElement).value)}
            />
          </label>
        </p>
        <p>
          <button type="submit" class="primary" disabled={busy}>
            Create the passkey
          </button>
        </p>
      </form>
      {error !== undefined && (
        <p class="banner banner-bad" role="alert" data-sign-in-error>
          {error}
        </p>
      )}
    </section>
  );
}

import { useEffect, useState } from "preact/hooks";
import { wire } from "../app-state.js";
import { clockTime } from "../lib/time.js";

/** The connection's state, always visible in the header. */
export function ConnectionBadge() {
  const state = wire.state.value;
  const retryAt = wire.retryAt.value;
  const lostAt = wire.lostAt.value;
  const [, tick] = useState(0);
  useEffect(() => {
    if (state !== "reconnecting") return;
    const t = setInterval(() => tick((n) => n + 1), 500);
    return () => clearInterval(t);
  }, [state]);
  let text: string;
  switch (state) {
    case "open":
      text = "Connected";
      break;
    case "connecting":
      text = "Connecting…";
      break;
    case "signed_out":
      text = "Signed out";
      break;
    case "reconnecting": {
      const s = retryAt === undefined ? 0 : Math.max(0, Math.ceil((retryAt - Date.now()) / 1000));
      text = `Reconnecting${s > 0 ? ` in ${s} s` : "…"}`;
      break;
    }
  }
  return (
    <div class={`conn conn-${state}`} role="status" aria-live="polite" data-conn={state}>
      <span class="conn-dot" aria-hidden="true" />
      <span class="conn-text">{text}</span>
      {state === "reconnecting" && lostAt !== undefined && (
        <span class="conn-since"> (lost at {clockTime(lostAt)})</span>
      )}
      {state === "reconnecting" && (
        <button type="button" class="link-button" onClick={() => wire.retryNow()}>
          Retry now
        </button>
      )}
    </div>
  );
}

/** Shown across the page while this browser has no owner cookie. */
export function SignedOutBanner() {
  if (wire.state.value !== "signed_out") return null;
  return (
    <div class="banner banner-bad" role="alert">
      This browser is not signed in to the instance. Run <code>ccmsg open</code> on the machine that
      runs it (or <code>ccmsg open --print</code> and open the link here).
    </div>
  );
}

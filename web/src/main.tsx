import { effect } from "@preact/signals";
import { render } from "preact";
import { App } from "./app.js";
import { wire } from "./app-state.js";
import { onRefreshed, person, refresh } from "./conn/person.js";
import "./styles.css";

// A person's new access token moves the open connection's deadline
// (`auth_refresh`) instead of reconnecting.
onRefreshed((session) => {
  if (wire.state.peek() === "open")
    void wire.request("auth_refresh", { access_token: session.access.value }).catch(() => {});
});
// Refused while holding a token (it expired, or was revoked): try the
// refresh cookie once; without a new token the page shows the sign-in.
effect(() => {
  if (wire.state.value !== "signed_out" || person.peek() === undefined) return;
  void refresh("reconnect").then((next) => {
    if (next === undefined) person.value = undefined;
    else wire.retryNow();
  });
});

// A reload keeps a person signed in through the refresh cookie; the owner's
// cookie (ccmsg open) needs nothing.
void refresh("reload").finally(() => {
  wire.start();
  render(<App />, document.getElementById("app")!);
});

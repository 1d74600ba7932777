import { signal } from "@preact/signals";

/** Where the console is: the part after `#`, so the page is one file and a
 * reload or a shared link lands on the same view. */
export type Route =
  | { view: "sessions" }
  | { view: "session"; sid: string }
  | { view: "board" }
  | { view: "notifications" }
  | { view: "reservations" }
  | { view: "kv"; ns?: string };

const SID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NS = /^[a-z][a-z0-9_]{0,63}$/;

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/");
  switch (parts[0]) {
    case "session":
      return SID.test(parts[1] ?? "") ? { view: "session", sid: parts[1]! } : { view: "sessions" };
    case "board":
      return { view: "board" };
    case "notifications":
      return { view: "notifications" };
    case "reservations":
      return { view: "reservations" };
    case "kv":
      return NS.test(parts[1] ?? "") ? { view: "kv", ns: parts[1] } : { view: "kv" };
    default:
      return { view: "sessions" };
  }
}

export function href(route: Route): string {
  switch (route.view) {
    case "sessions":
      return "#/";
    case "session":
      return `#/session/${route.sid}`;
    case "kv":
      return route.ns === undefined ? "#/kv" : `#/kv/${route.ns}`;
    default:
      return `#/${route.view}`;
  }
}

export const route = signal<Route>(parseRoute(location.hash));
addEventListener("hashchange", () => {
  route.value = parseRoute(location.hash);
});

export function go(to: Route): void {
  location.hash = href(to);
}

import { signal } from "@preact/signals";

/** Where the console is: the part after `#`, so the page is one file and a
 * reload or a shared link lands on the same view. */
export type Route =
  | { view: "sessions" }
  | { view: "session"; sid: string }
  | { view: "board" }
  /** The attention queue: prompts and questions waiting on the person. */
  | { view: "attention" }
  | { view: "notifications" }
  | { view: "reservations" }
  | { view: "kv"; ns?: string }
  /** Search across sessions; `q`, `sid` and `since` ride in the hash's own
   * query (`#/search?q=…`), so a search is a link like any view. */
  | { view: "search"; q?: string; sid?: string; since?: string };

const SID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NS = /^[a-z][a-z0-9_]{0,63}$/;

/** The search route's parameters, each only when given. */
function searchRoute(query: string): Route {
  const p = new URLSearchParams(query);
  const r: Route = { view: "search" };
  for (const k of ["q", "sid", "since"] as const) {
    const v = p.get(k);
    if (v !== null && v !== "") r[k] = v;
  }
  return r;
}

export function parseRoute(hash: string): Route {
  const rest = hash.replace(/^#\/?/, "");
  const mark = rest.indexOf("?");
  const parts = (mark < 0 ? rest : rest.slice(0, mark)).split("/");
  switch (parts[0]) {
    case "search":
      return searchRoute(mark < 0 ? "" : rest.slice(mark + 1));
    case "session":
      return SID.test(parts[1] ?? "") ? { view: "session", sid: parts[1]! } : { view: "sessions" };
    case "board":
      return { view: "board" };
    case "attention":
      return { view: "attention" };
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
    case "search": {
      const p = new URLSearchParams();
      for (const k of ["q", "sid", "since"] as const) {
        const v = route[k];
        if (v !== undefined && v !== "") p.set(k, v);
      }
      const query = p.toString();
      return query === "" ? "#/search" : `#/search?${query}`;
    }
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

/** Show `to` in the address bar without a new history entry (a search box
 * as it is typed in), and make it the route. */
export function replace(to: Route): void {
  history.replaceState(history.state, "", href(to));
  route.value = to;
}

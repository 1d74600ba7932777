import {
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { GRANT_LIFETIME_MS } from "../../src/instance/sandbox/grants.js";
import { ownerHeaders } from "../helpers/http.js";
import { startInstance, type TestInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// The sandbox (contract §4.3.5, DR-0042) on a real instance: grants minted
// over the socket, files fetched through `<gid>.sandbox.localhost:<port>`
// with node's own HTTP client naming that Host (no resolver involved), and
// every way out refused — outside the root, a symlink swapped in after the
// grant, a revoked or expired grant, a wrong token, the console's Host with
// the token, the sandbox's Host with the owner's credential.

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

const SID = newSid();
const SECRET = "TOPSECRET-outside-the-root";
const PAGE = "<!doctype html><title>preview</title><p>hello from the sandbox</p>\n";

let inst: TestInstance;
let person: Peer;
let own: Peer;
let w: string;
let repo: string;
let port: number;
let helloCapabilities: string[];

interface Fetched {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request to the instance's listener with a Host of our choosing. */
function fetchAs(
  host: string,
  path: string,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<Fetched> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: init.method ?? "GET",
        headers: { host, ...init.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

interface GrantReply {
  gid: string;
  token: string;
  url: string;
  expires_at: number;
}

const grant = (path: string, kind = "contained") =>
  person.call<GrantReply>("sandbox_grant", { sid: SID, kind, path });

async function grantCode(path: string, kind = "contained"): Promise<string> {
  const r = await person.request("sandbox_grant", { sid: SID, kind, path });
  return r.ok ? "ok" : r.error!.code;
}

/** Fetch `url` (a grant's) through its own Host. */
function open(url: string, init: { method?: string; headers?: Record<string, string> } = {}) {
  const u = new URL(url);
  return fetchAs(u.host, `${u.pathname}${u.search}`, init);
}

const sandboxHost = (g: GrantReply) => new URL(g.url).host;

beforeAll(async () => {
  inst = await startInstance();
  port = Number(new URL(inst.http).port);
  w = mkdtempSync(join(tmpdir(), "ccmsg-sandbox-it-"));
  repo = join(w, "repo");
  mkdirSync(join(repo, "site", "img"), { recursive: true });
  mkdirSync(join(repo, "site", "sub"), { recursive: true });
  mkdirSync(join(w, "outside"));
  writeFileSync(join(repo, "site", "index.html"), PAGE);
  writeFileSync(join(repo, "site", "style.css"), "p { color: green }\n");
  writeFileSync(join(repo, "site", "img", "dot.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 1]));
  writeFileSync(join(repo, "site", "sub", "note.txt"), "a note\n");
  writeFileSync(join(repo, "site", "NOTES"), "plain text, no extension\n");
  writeFileSync(join(repo, "site", "blob"), Buffer.from([0, 1, 2, 3, 255]));
  writeFileSync(join(repo, "top.txt"), "above the granted directory\n");
  writeFileSync(join(w, "outside", "secret.txt"), SECRET);
  symlinkSync(join(w, "outside", "secret.txt"), join(repo, "site", "link-out"));
  symlinkSync(join(w, "outside"), join(repo, "dir-out"));
  person = await Peer.unix(inst.socket);
  helloCapabilities = (await person.helloUser()).capabilities as string[];
  own = await Peer.unix(inst.socket);
  await own.helloSession(SID, { cwd: repo, repo_root: repo });
});

afterAll(async () => {
  for (const p of [person, own]) p?.close();
  await inst?.stop();
  rmSync(w, { recursive: true, force: true });
});

describe("the capability", () => {
  it("is advertised when the HTTP listener is up, and not without one", async () => {
    expect(helloCapabilities).toContain("sandbox");
    const bare = await startInstance({ args: ["--http", "off"] });
    try {
      const p = await Peer.unix(bare.socket);
      const h = await p.helloUser();
      expect(h.capabilities).not.toContain("sandbox");
      const r = await p.request("sandbox_grant", { sid: SID, kind: "contained", path: "x" });
      expect(r.error?.code).toBe("capability_unavailable");
      p.close();
    } finally {
      await bare.stop();
    }
  });
});

describe("minting", () => {
  it("answers a URL on the grant's own sandbox origin that opens the file as itself", async () => {
    const g = await grant("site/index.html");
    expect(g.gid).toMatch(/^[a-z2-7]{20}$/);
    expect(g.url).toBe(`http://${g.gid}.sandbox.localhost:${port}/${g.token}/index.html`);
    const r = await open(g.url);
    expect(r.status).toBe(200);
    expect(r.body).toBe(PAGE);
    expect(r.headers["content-type"]).toBe("text/html; charset=utf-8");
    const csp = String(r.headers["content-security-policy"]);
    expect(csp.split("; ")[0]).toBe("sandbox allow-same-origin");
    expect(csp).toContain("default-src 'none'");
    expect(r.headers["x-content-type-options"]).toBe("nosniff");
    expect(r.headers["cache-control"]).toBe("no-store");
    expect(r.headers["cross-origin-resource-policy"]).toBe("same-origin");
    expect(r.headers["referrer-policy"]).toBe("no-referrer");
    expect(r.headers["set-cookie"]).toBeUndefined();
  });

  it("gives the same grant with a later expiry when the same scope is minted again", async () => {
    const first = await grant("site/index.html");
    await inst.advanceClock(60_000);
    const again = await grant("./site//index.html");
    expect(again.gid).toBe(first.gid);
    expect(again.token).toBe(first.token);
    expect(again.expires_at).toBeGreaterThanOrEqual(first.expires_at + 60_000);
    const other = await grant("site/style.css");
    expect(other.gid).not.toBe(first.gid);
  });

  it("refuses with path_forbidden what file_read would not open", async () => {
    expect(await grantCode("../outside/secret.txt")).toBe("path_forbidden");
    expect(await grantCode(join(w, "outside", "secret.txt"))).toBe("path_forbidden");
    expect(await grantCode("site/link-out")).toBe("path_forbidden");
    expect(await grantCode("dir-out/secret.txt")).toBe("path_forbidden");
    expect(await grantCode("site")).toBe("path_forbidden");
    expect(await grantCode("site/missing.html")).toBe("path_forbidden");
    expect(await grantCode(join(repo, "top.txt"), "workspace")).toBe("path_forbidden");
    expect(await grantCode(join(repo, "top.txt"), "external")).toBe("path_forbidden");
  });

  it("lets a session mint nothing: the op is a person's", async () => {
    const r = await own.request("sandbox_grant", {
      sid: SID,
      kind: "contained",
      path: "site/index.html",
    });
    expect(r.error?.code).toBe("forbidden");
  });
});

describe("siblings through the token", () => {
  it("serves files beside and below the granted one, each with its own type", async () => {
    const g = await grant("site/index.html");
    const base = `http://${sandboxHost(g)}/${g.token}/`;
    const css = await open(`${base}style.css`);
    expect(css.status).toBe(200);
    expect(css.headers["content-type"]).toBe("text/css; charset=utf-8");
    const png = await open(`${base}img/dot.png`);
    expect(png.headers["content-type"]).toBe("image/png");
    expect((await open(`${base}sub/note.txt`)).body).toBe("a note\n");
    expect((await open(`${base}NOTES`)).headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect((await open(`${base}blob`)).headers["content-type"]).toBe("application/octet-stream");
  });

  it("answers HEAD, a simple Range, and a download", async () => {
    const g = await grant("site/index.html");
    const head = await open(g.url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.body).toBe("");
    expect(head.headers["content-length"]).toBe(String(Buffer.byteLength(PAGE)));
    const part = await open(g.url, { headers: { range: "bytes=2-8" } });
    expect(part.status).toBe(206);
    expect(part.body).toBe(PAGE.slice(2, 9));
    expect(part.headers["content-range"]).toBe(`bytes 2-8/${Buffer.byteLength(PAGE)}`);
    const tail = await open(g.url, { headers: { range: "bytes=-5" } });
    expect(tail.body).toBe(PAGE.slice(-5));
    expect((await open(g.url, { headers: { range: "bytes=9999-" } })).status).toBe(416);
    const dl = await open(`${g.url}?download=1`);
    expect(dl.status).toBe(200);
    expect(String(dl.headers["content-disposition"])).toMatch(/^attachment; filename="index.html"/);
    expect((await open(g.url, { method: "POST" })).status).toBe(405);
  });

  it("never climbs above the granted directory nor out of the root", async () => {
    const g = await grant("site/index.html");
    const host = sandboxHost(g);
    for (const path of [
      `/${g.token}/../top.txt`,
      `/${g.token}/..%2Ftop.txt`,
      `/${g.token}/sub/..%2F..%2Ftop.txt`,
      `/${g.token}/..%2F..%2Foutside%2Fsecret.txt`,
      `/${g.token}/link-out`,
      `/${g.token}/%2E%2E/top.txt`,
      `/${g.token}/`,
      `/${g.token}/sub`,
    ]) {
      const r = await fetchAs(host, path);
      expect([403, 404], path).toContain(r.status);
      expect(r.body, path).not.toContain(SECRET);
      expect(r.body, path).not.toContain("above the granted directory");
    }
    const out = JSON.parse((await fetchAs(host, `/${g.token}/link-out`)).body);
    expect(out.code).toBe("path_forbidden");
  });

  it("refuses a symlink swapped in after the grant was minted, file or directory", async () => {
    writeFileSync(join(repo, "site", "swap.html"), "<p>harmless</p>");
    const g = await grant("site/swap.html");
    expect((await open(g.url)).body).toBe("<p>harmless</p>");
    unlinkSync(join(repo, "site", "swap.html"));
    symlinkSync(join(w, "outside", "secret.txt"), join(repo, "site", "swap.html"));
    const file = await open(g.url);
    expect(file.status).toBe(403);
    expect(file.body).not.toContain(SECRET);
    // A directory under the grant turned into a way out.
    const sub = join(repo, "site", "sub");
    renameSync(sub, join(repo, "sub-was"));
    symlinkSync(join(w, "outside"), sub);
    const dir = await fetchAs(sandboxHost(g), `/${g.token}/sub/secret.txt`);
    expect(dir.status).toBe(403);
    expect(dir.body).not.toContain(SECRET);
    unlinkSync(sub);
    renameSync(join(repo, "sub-was"), sub);
  });

  it("looks like nothing there for a wrong or missing token", async () => {
    const g = await grant("site/index.html");
    const wrong = `${g.token.slice(0, -1)}${g.token.endsWith("A") ? "B" : "A"}`;
    for (const path of [`/${wrong}/index.html`, "/index.html", "/", `/${g.token}`]) {
      const r = await fetchAs(sandboxHost(g), path);
      expect(r.status, path).toBe(404);
      expect(r.body, path).not.toContain("hello from the sandbox");
    }
  });

  it("refuses a request another origin sends", async () => {
    const g = await grant("site/index.html");
    const r = await open(g.url, { headers: { origin: "http://evil.example" } });
    expect(r.status).toBe(403);
    const own = await open(g.url, { headers: { origin: `http://${sandboxHost(g)}` } });
    expect(own.status).toBe(200);
  });
});

describe("the two origins stay apart", () => {
  it("the console's Host does not take the token", async () => {
    const g = await grant("site/index.html");
    const path = new URL(g.url).pathname;
    const console = `127.0.0.1:${port}`;
    const bare = await fetchAs(console, path);
    expect(bare.status).toBe(401);
    const owner = await fetchAs(console, path, { headers: ownerHeaders(inst.http) });
    expect(owner.status).toBe(404);
    expect(owner.body).not.toContain("hello from the sandbox");
  });

  it("a sandbox Host does not take the owner's credential", async () => {
    const g = await grant("site/index.html");
    const host = sandboxHost(g);
    const owner = ownerHeaders(inst.http);
    for (const path of ["/api/search?q=hello", "/", "/api/console/inbox", "/_test/compacted"]) {
      const r = await fetchAs(host, path, { headers: owner });
      expect(r.status, path).toBe(404);
      expect(r.body, path).toContain('"not_found"');
    }
    const upgrade = await fetchAs(host, "/ws", {
      headers: { ...owner, connection: "Upgrade", upgrade: "websocket" },
    }).catch((e: Error) => ({ status: 0, body: e.message, headers: {} }));
    expect(upgrade.status).toBe(403);
    // A sandbox name the instance never granted is no console either.
    const unknown = await fetchAs(`aaaaaaaaaaaaaaaaaaaa.sandbox.localhost:${port}`, "/", {
      headers: owner,
    });
    expect(unknown.status).toBe(403);
  });

  it("the console refuses a sandbox Origin", async () => {
    const g = await grant("site/index.html");
    const r = await fetchAs(`127.0.0.1:${port}`, "/api/search?q=x", {
      headers: { ...ownerHeaders(inst.http), origin: `http://${sandboxHost(g)}` },
    });
    expect(r.status).toBe(403);
  });
});

describe("revoking and expiry", () => {
  it("a revoked grant's Host is no longer served, and revoking always succeeds", async () => {
    writeFileSync(join(repo, "site", "revoke.txt"), "to be revoked\n");
    const g = await grant("site/revoke.txt");
    expect((await open(g.url)).status).toBe(200);
    await person.call("sandbox_revoke", { gid: g.gid });
    const r = await open(g.url);
    expect(r.status).toBe(403);
    expect(r.body).not.toContain("to be revoked");
    await person.call("sandbox_revoke", { gid: g.gid });
    await person.call("sandbox_revoke", { gid: "never-minted" });
    // Minting the scope again makes a new grant.
    const again = await grant("site/revoke.txt");
    expect(again.gid).not.toBe(g.gid);
  });

  it("an expired grant is not served", async () => {
    writeFileSync(join(repo, "site", "expire.txt"), "short-lived\n");
    const g = await grant("site/expire.txt");
    expect((await open(g.url)).status).toBe(200);
    await inst.advanceClock(GRANT_LIFETIME_MS + 1000);
    const r = await open(g.url);
    expect(r.status).toBe(403);
    expect(r.body).not.toContain("short-lived");
  });
});

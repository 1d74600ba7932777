import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultStateDir, isolatedHome, runCli, startInstance } from "../helpers/instance.js";
import { Peer } from "../helpers/peer.js";
import { freePorts } from "../helpers/ports.js";

// `ccmsg mesh add|list|remove`, with and without a running instance, and the
// config's `mesh.endpoints` list (DR-0047).

function writeConfig(env: Record<string, string>, value: unknown): void {
  const dir = join(env.XDG_CONFIG_HOME!, "ccmsg");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify(value));
}

describe("ccmsg mesh", () => {
  it("without an instance edits mesh.json (0600) and says the mesh is not running", async () => {
    const { env } = isolatedHome();
    const added = await runCli(["mesh", "add", "http://127.0.0.1:9", "--json"], env);
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toEqual({ endpoint: "http://127.0.0.1:9/", added: true });
    const file = join(defaultStateDir(env), "mesh.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = await runCli(["mesh", "add", "http://127.0.0.1:9/", "--json"], env);
    expect(JSON.parse(again.stdout)).toMatchObject({ added: false });
    const list = await runCli(["mesh", "list", "--json"], env);
    const listed = JSON.parse(list.stdout) as { inert: string; peers: unknown[] };
    expect(listed.inert).toContain("no instance is running");
    expect(listed.peers).toEqual([
      { endpoint: "http://127.0.0.1:9/", host: "127.0.0.1", source: "file", reachable: false },
    ]);
    const text = await runCli(["mesh", "list", "--text"], env);
    expect(text.stdout).toContain("mesh inactive: no instance is running");
    const bad = await runCli(["mesh", "add", "ftp://x/", "--text"], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("not an endpoint");
    const removed = await runCli(["mesh", "remove", "http://127.0.0.1:9", "--json"], env);
    expect(removed.code).toBe(0);
    const gone = await runCli(["mesh", "remove", "http://127.0.0.1:9", "--json"], env);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain("not_found");
  });

  it("a malformed or duplicated mesh list fails startup with a message naming the row", async () => {
    const home = isolatedHome();
    writeConfig(home.env, {
      mesh: {
        endpoints: [{ endpoint: "http://127.0.0.1:7001" }, { endpoint: "http://127.0.0.1:7001/" }],
      },
    });
    await expect(startInstance({ env: home.env })).rejects.toThrow(
      "mesh.endpoints[1].endpoint: http://127.0.0.1:7001/ is already listed at mesh.endpoints[0]",
    );
    const other = isolatedHome();
    mkdirSync(defaultStateDir(other.env), { recursive: true });
    writeFileSync(join(defaultStateDir(other.env), "mesh.json"), "{ broken");
    await expect(startInstance({ env: other.env })).rejects.toThrow(
      "mesh.json: (file): not valid JSON",
    );
  });

  it("an instance without HTTP is in no mesh, and mesh list says why", async () => {
    const inst = await startInstance({ args: ["--http", "off"] });
    const env = { ...inst.env, CCMSG_STATE_DIR: inst.stateDir };
    const list = await runCli(["mesh", "list", "--json"], env);
    expect(JSON.parse(list.stdout)).toMatchObject({
      inert: expect.stringContaining("no HTTP listener"),
    });
    await inst.stop();
  });

  it("the config list names every instance (itself included); mesh add on the other links them", async () => {
    const [portA, portB] = await freePorts(2);
    const [a, b] = [`http://127.0.0.1:${portA}/`, `http://127.0.0.1:${portB}/`];
    const homeA = isolatedHome();
    // The same list on every host: A finds itself in it by its endpoint.
    const asleep = { endpoint: "http://127.0.0.1:9/", id: "c".repeat(32) };
    writeConfig(homeA.env, { mesh: { endpoints: [{ endpoint: a }, { endpoint: b }, asleep] } });
    const instA = await startInstance({ env: homeA.env, args: ["--http", `127.0.0.1:${portA}`] });
    const instB = await startInstance({ args: ["--http", `127.0.0.1:${portB}`] });
    const envA = { ...instA.env, CCMSG_STATE_DIR: instA.stateDir };
    const envB = { ...instB.env, CCMSG_STATE_DIR: instB.stateDir };
    const listA = JSON.parse((await runCli(["mesh", "list", "--json"], envA)).stdout) as {
      self: { endpoint: string };
      peers: { endpoint: string; source: string; reachable: boolean }[];
    };
    expect(listA.self.endpoint).toBe(a);
    expect(listA.peers.map((p) => [p.endpoint, p.source])).toEqual([
      [b, "config"],
      [asleep.endpoint, "config"],
    ]);
    // hello.instances: no id before a handshake, whatever the row states.
    const peer = await Peer.unix(instA.socket);
    const hello = (await peer.request("hello", {
      role: "user",
      protocol_version: 3,
    })) as unknown as {
      instances: { id?: string; endpoint?: string; reachable: boolean }[];
    };
    expect(hello.instances).toContainEqual({
      endpoint: asleep.endpoint,
      host: "127.0.0.1",
      reachable: false,
    });
    peer.close();
    // B does not trust A yet: A's dial is refused, nothing is linked.
    expect(listA.peers[0]!.reachable).toBe(false);
    const added = await runCli(["mesh", "add", a, "--json"], envB);
    expect(added.code, added.stderr).toBe(0);
    const deadline = Date.now() + 10_000;
    let linked = false;
    while (!linked && Date.now() < deadline) {
      const l = JSON.parse((await runCli(["mesh", "list", "--json"], envB)).stdout) as {
        peers: { id?: string; reachable: boolean }[];
      };
      linked = l.peers[0]?.reachable === true && l.peers[0]?.id === instA.id;
      if (!linked) await new Promise((r) => setTimeout(r, 100));
    }
    expect(linked).toBe(true);
    // A config row is not mesh.json's to remove.
    const refused = await runCli(["mesh", "remove", b, "--text"], envA);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("config file's mesh.endpoints");
    await Promise.all([instA.stop(), instB.stop()]);
  });
});

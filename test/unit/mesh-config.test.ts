import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkConfig } from "../../src/config/config.js";
import {
  checkMesh,
  MeshConfigError,
  normalizeEndpoint,
  readPeersFile,
  writePeersFile,
} from "../../src/config/mesh.js";
import { ContractError } from "../../src/contract/errors.js";

describe("mesh endpoints and the peers list", () => {
  it("normalises an endpoint to one spelling: canonical URL with a trailing slash", () => {
    expect(normalizeEndpoint("http://127.0.0.1:7077")).toBe("http://127.0.0.1:7077/");
    expect(normalizeEndpoint("http://127.0.0.1:7077/")).toBe("http://127.0.0.1:7077/");
    expect(normalizeEndpoint("https://Box.Example.ts.net:443/ccmsg")).toBe(
      "https://box.example.ts.net/ccmsg/",
    );
    expect(normalizeEndpoint("https://box.example.ts.net/ccmsg/")).toBe(
      "https://box.example.ts.net/ccmsg/",
    );
    expect(normalizeEndpoint(" http://[::1]:80/ ")).toBe("http://[::1]/");
    for (const bad of [
      "ftp://h/",
      "http://h/?q=1",
      "http://h/#x",
      "http://u:p@h/",
      "not a url",
      "",
    ])
      expect(normalizeEndpoint(bad), bad).toBeUndefined();
  });

  it("checks the config's mesh section: rows, duplicates (after normalising), ids", () => {
    expect(
      checkMesh(
        {
          endpoints: [{ endpoint: "http://a:1" }, { id: "a".repeat(32), endpoint: "http://b:1/" }],
        },
        "c.json",
      ),
    ).toEqual({
      endpoints: [{ endpoint: "http://a:1/" }, { endpoint: "http://b:1/", id: "a".repeat(32) }],
    });
    const refused: [unknown, string][] = [
      [[], "mesh: must be an object"],
      [{ peers: [] }, "mesh.peers: unknown key"],
      [{ endpoints: {} }, "mesh.endpoints: must be an array"],
      [
        { endpoints: [{ endpoint: "http://a:1" }, { endpoint: "http://a:1/" }] },
        "mesh.endpoints[1].endpoint: http://a:1/ is already listed at mesh.endpoints[0]",
      ],
      [
        { endpoints: [{ endpoint: "http://a:1/?x" }] },
        "mesh.endpoints[0].endpoint: must be an http(s) base URL",
      ],
      [
        { endpoints: [{ endpoint: "http://a:1/", id: "XYZ" }] },
        "mesh.endpoints[0].id: must be an instance id",
      ],
      [
        { endpoints: [{ endpoint: "http://a:1/", name: "a" }] },
        "mesh.endpoints[0].name: unknown key",
      ],
      [
        {
          endpoints: [
            { endpoint: "http://a:1/", id: "d".repeat(32) },
            { endpoint: "http://b:1/", id: "d".repeat(32) },
          ],
        },
        `mesh.endpoints[1].id: ${"d".repeat(32)} is already listed at mesh.endpoints[0]`,
      ],
    ];
    for (const [value, msg] of refused) {
      let error: unknown;
      try {
        checkMesh(value, "c.json");
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(value)).toBeInstanceOf(MeshConfigError);
      expect(error).toBeInstanceOf(ContractError);
      expect((error as Error).message).toContain(`config c.json: ${msg}`);
    }
    expect(
      checkConfig({ mesh: { endpoints: [{ endpoint: "http://a:1" }] } }, "c.json").mesh,
    ).toEqual({
      endpoints: [{ endpoint: "http://a:1/" }],
    });
  });

  it("mesh.json: written whole with mode 0600, read back; a damaged one is an error naming the file", () => {
    const dir = mkdtempSync(join(tmpdir(), "ccmsg-mesh-"));
    const file = join(dir, "mesh.json");
    expect(readPeersFile(file)).toEqual([]);
    writePeersFile(file, [
      { endpoint: "http://a:1/" },
      { endpoint: "http://b:2/", id: "b".repeat(32) },
    ]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readPeersFile(file)).toEqual([
      { endpoint: "http://a:1/" },
      { endpoint: "http://b:2/", id: "b".repeat(32) },
    ]);
    expect(JSON.parse(readFileSync(file, "utf8"))).toHaveProperty("peers");
    writeFileSync(file, "{ not json");
    expect(() => readPeersFile(file)).toThrow(`${file}: (file): not valid JSON`);
    writeFileSync(file, JSON.stringify({ peers: [{ endpoint: "x" }] }));
    expect(() => readPeersFile(file)).toThrow(`${file}: peers[0].endpoint`);
  });
});

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/instance.js";

// Rules of the house (ARCHITECTURE.md), as tests that walk the source and list
// every offender, so one failure names them all.

const SRC = join(ROOT, "src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "fixtures" ? [] : sources(path);
    return /\.tsx?$/.test(e.name) ? [path] : [];
  });
}

/** Code lines of a file, comments dropped (a comment may quote a frame). */
function codeLines(path: string): { line: string; at: string }[] {
  const rel = relative(ROOT, path);
  return readFileSync(path, "utf8")
    .split("\n")
    .map((line, i) => ({ line, at: `${rel}:${i + 1}` }))
    .filter(({ line }) => !/^\s*(\/\/|\*|\/\*\*)/.test(line));
}

const WIRE_JSON = [
  // JSON.stringify over a literal that carries an envelope key
  /JSON\.stringify\(\s*\{[^}]*\b(ok|ev|op|request_id)\s*:/,
  // frame text written by hand
  /["'`]\{\\?"(ok|ev|op|request_id)\\?"\s*:/,
  // a reply object literal
  /\bok:\s*(true|false),\s*request_id\b/,
];

describe("the house", () => {
  it("builds wire frames only with the contract's envelope builders", () => {
    const offenders: string[] = [];
    for (const file of sources(SRC)) {
      if (file.endsWith(join("contract", "frames.ts"))) continue;
      for (const { line, at } of codeLines(file)) {
        if (WIRE_JSON.some((re) => re.test(line))) offenders.push(`${at}: ${line.trim()}`);
        if (/\{\s*ev:\s*"/.test(line) && !line.includes("encodeEvent(")) {
          offenders.push(`${at}: ${line.trim()}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it("has transports that know frames, never the connection or dispatch", () => {
    const offenders: string[] = [];
    const wire = join(SRC, "instance", "wire");
    for (const name of ["uds.ts", "ws.ts", "ws-frames.ts", "transport.ts"]) {
      for (const { line, at } of codeLines(join(wire, name))) {
        if (/from "\.\/(connection|outbound)\.js"|from "\.\.\/(dispatch|server)\.js"/.test(line)) {
          offenders.push(`${at}: ${line.trim()}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it("keeps wire/ below the gate: no transport, framer or connection imports auth/ or http/", () => {
    const instance = join(SRC, "instance");
    const above = ["auth", "http"].map((dir) => join(instance, dir) + "/");
    const offenders: string[] = [];
    for (const file of sources(join(instance, "wire")))
      for (const target of importsOf(file))
        if (above.some((dir) => target.startsWith(dir)))
          offenders.push(`${relative(ROOT, file)} → ${relative(ROOT, target)}`);
    expect(offenders).toEqual([]);
  });

  it("keeps the instance's internals out of its clients (the CLI runs it only by loading it on demand)", () => {
    // cli/daemon-run.ts is the instance's own bundle (DR-0064): it may import
    // the instance, and the CLI reaches it only by import().
    const entry = join(SRC, "cli", "daemon-run.ts");
    const offenders: string[] = [];
    for (const dir of ["cli", "client", "mcp"]) {
      for (const file of sources(join(SRC, dir))) {
        if (file === entry) continue;
        for (const { line, at } of codeLines(file)) {
          if (/from "\.\.\/instance\/|from "\.\/daemon-run\.js"/.test(line))
            offenders.push(`${at}: ${line.trim()}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it("keeps the clients out of the instance: nothing in instance/ imports client/, cli/ or mcp/", () => {
    const above = ["client", "cli", "mcp"].map((dir) => join(SRC, dir) + "/");
    const offenders: string[] = [];
    for (const file of sources(join(SRC, "instance")))
      for (const target of importsOf(file))
        if (above.some((dir) => target.startsWith(dir)))
          offenders.push(`${relative(ROOT, file)} → ${relative(ROOT, target)}`);
    expect(offenders).toEqual([]);
  });

  it("has handlers typed by the contract: no casts and no non-null assertions", () => {
    // Each handler family sits beside its engine: `handlers.ts` or `*-handlers.ts`.
    const handlerFiles = sources(join(SRC, "instance")).filter((f) =>
      /(^|[/-])handlers\.ts$/.test(f),
    );
    expect(handlerFiles.length).toBeGreaterThan(10);
    expect(handlerFiles.flatMap(castsIn)).toEqual([]);
  });

  it("keeps the instance's composition root to wiring (at most 150 lines)", () => {
    const lines = readFileSync(join(SRC, "instance", "server.ts"), "utf8").split("\n").length;
    expect(lines).toBeLessThanOrEqual(150);
  });

  it("has one error type: no other class extends Error", () => {
    const offenders: string[] = [];
    for (const file of sources(SRC)) {
      if (file.endsWith(join("contract", "errors.ts"))) continue;
      for (const { line, at } of codeLines(file)) {
        if (/class \w+ extends Error\b/.test(line)) offenders.push(`${at}: ${line.trim()}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("has no import circles in src/ or web/src/ (the module graph as TypeScript reads it)", () => {
    const circles = importCircles([...sources(SRC), ...sources(join(ROOT, "web", "src"))]);
    expect(circles.map((c) => c.map((f) => relative(ROOT, f)).join(" → "))).toEqual([]);
  });

  it("keeps the top of src/ a list of layers: folders only", () => {
    const loose = readdirSync(SRC, { withFileTypes: true }).filter((e) => !e.isDirectory());
    expect(loose.map((e) => e.name)).toEqual([]);
  });

  it("keeps the instance's root to the composition root, dispatch, the topic hub, shutdown and logging", () => {
    const root = readdirSync(join(SRC, "instance"), { withFileTypes: true })
      .filter((e) => !e.isDirectory())
      .map((e) => e.name)
      .sort();
    expect(root).toEqual([
      "dispatch.ts",
      "engines.ts",
      "log-file.ts",
      "log.ts",
      "server.ts",
      "shutdown.ts",
      "topic-hub.ts",
    ]);
  });

  it("has one register per capability folder, each registered by the composition root", () => {
    const instance = join(SRC, "instance");
    const registered = importsOf(join(instance, "engines.ts"));
    const offenders: string[] = [];
    for (const e of readdirSync(instance, { withFileTypes: true })) {
      if (!e.isDirectory() || NOT_CAPABILITIES.has(e.name)) continue;
      const file = join(instance, e.name, "register.ts");
      if (!existsSync(file)) {
        offenders.push(`${e.name}/: no register.ts`);
        continue;
      }
      const registers = exportedFunctions(file).filter((name) => name.startsWith("register"));
      if (registers.length !== 1)
        offenders.push(`${e.name}/register.ts exports ${registers.length} register functions`);
      if (!registered.includes(file)) offenders.push(`${e.name}/register.ts: not in engines.ts`);
    }
    expect(offenders).toEqual([]);
  });

  it("has no bag of services: nothing declares a type named Services", () => {
    const offenders = sources(SRC).filter((file) =>
      /\b(interface|type)\s+Services\b/.test(readFileSync(file, "utf8")),
    );
    expect(offenders.map((f) => relative(ROOT, f))).toEqual([]);
  });

  it("keeps the CLI out of the client and the MCP server (they sit below it)", () => {
    const offenders: string[] = [];
    for (const dir of ["client", "mcp"])
      for (const file of sources(join(SRC, dir)))
        for (const target of importsOf(file))
          if (target.startsWith(join(SRC, "cli") + "/"))
            offenders.push(`${relative(ROOT, file)} → ${relative(ROOT, target)}`);
    expect(offenders).toEqual([]);
  });
});

/** Every type assertion (`as T` but `as const`, `<T>x`) and non-null
 * assertion (`x!`) in a file, as `file:line: text`; read from the syntax
 * tree, so no spelling of one slips past. */
function castsIn(file: string): string[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(file, "utf8"),
    ts.ScriptTarget.Latest,
    true,
  );
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const cast =
      ts.isNonNullExpression(node) ||
      ts.isTypeAssertionExpression(node) ||
      (ts.isAsExpression(node) && node.type.getText(source) !== "const");
    if (cast) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      found.push(`${relative(ROOT, file)}:${line}: ${node.getText(source)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Folders of src/instance/ that are layers under the capabilities, not
 * capabilities: the transports, the HTTP listener, the instance's store. */
const NOT_CAPABILITIES = new Set(["wire", "http", "store"]);

/** The names of the functions a module exports, from its syntax tree. */
function exportedFunctions(file: string): string[] {
  const tree = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
  return tree.statements.flatMap((node) =>
    ts.isFunctionDeclaration(node) &&
    node.name !== undefined &&
    node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
      ? [node.name.text]
      : [],
  );
}

/** The local modules a file imports — static, type-only and dynamic — as
 * TypeScript's own pre-processor finds them, resolved to files. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return importedFiles.flatMap(({ fileName }) => {
    if (!fileName.startsWith(".")) return [];
    const base = resolve(dirname(file), fileName).replace(/\.js$/, "");
    return [`${base}.ts`, `${base}.tsx`, join(base, "index.ts")]
      .filter((f) => existsSync(f))
      .slice(0, 1);
  });
}

/** Every strongly connected set of two or more modules (Tarjan). */
function importCircles(files: string[]): string[][] {
  const graph = new Map(files.map((f) => [f, importsOf(f)]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const circle: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) {
      onStack.delete(w);
      circle.push(w);
    }
    if (circle.length > 1) circles.push(circle.sort());
  };
  for (const f of graph.keys()) if (!index.has(f)) visit(f);
  return circles;
}

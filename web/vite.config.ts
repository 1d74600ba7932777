import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const here = fileURLToPath(new URL(".", import.meta.url));

// The web console: Preact + @preact/signals, built into dist/web/ and served
// by the instance (src/instance/http/console-files.ts). `base: "./"` keeps
// every URL relative, so the console works under a reverse proxy's prefix.
export default defineConfig({
  root: here,
  base: "./",
  publicDir: "public",
  logLevel: "warn",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    // The page's CSP allows no inline script: no modulepreload polyfill
    // (every browser the console targets has modulepreload).
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
  },
});

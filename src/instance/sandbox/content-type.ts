import { posix } from "node:path";

// What a file served through the sandbox says it is (DR-0042): by its
// extension, else by a sniff of its head (text or bytes). Sent with
// `nosniff`, so the browser takes it at this word.

const TEXT = "; charset=utf-8";
const BY_EXTENSION: Record<string, string> = {
  html: `text/html${TEXT}`,
  htm: `text/html${TEXT}`,
  css: `text/css${TEXT}`,
  js: `text/javascript${TEXT}`,
  mjs: `text/javascript${TEXT}`,
  json: `application/json${TEXT}`,
  txt: `text/plain${TEXT}`,
  md: `text/markdown${TEXT}`,
  csv: `text/csv${TEXT}`,
  xml: `application/xml${TEXT}`,
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  ico: "image/vnd.microsoft.icon",
  pdf: "application/pdf",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  ogg: "audio/ogg",
  mp4: "video/mp4",
  webm: "video/webm",
  woff: "font/woff",
  woff2: "font/woff2",
  wasm: "application/wasm",
  zip: "application/zip",
  gz: "application/gzip",
};

/** The type named by `path`'s extension, or undefined. */
export function typeByExtension(path: string): string | undefined {
  const ext = posix.extname(path).slice(1).toLowerCase();
  return ext === "" ? undefined : BY_EXTENSION[ext];
}

/** The type of a file no extension names: text when its head is. */
export function typeBySniff(isText: boolean): string {
  return isText ? `text/plain${TEXT}` : "application/octet-stream";
}

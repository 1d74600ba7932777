// The ccmsg wire contract (generation 3) and the ECC shapes, as code: the
// package subpath `ccmsg/contract`. Pure: no I/O and no Node APIs, so the web
// console imports exactly what the instance runs.

export * from "./agents.js";
export * from "./attention.js";
export * from "./attributes.js";
export * from "./auth.js";
export * from "./connect.js";
export * from "./constants.js";
export * from "./direct-delivery.js";
export * from "./ecc/board.js";
export * from "./ecc/hud.js";
export * from "./ecc/loop-status.js";
export * from "./ecc/session.js";
export * from "./envelope.js";
export * from "./errors.js";
export * from "./files.js";
export * from "./fold.js";
export * from "./frames.js";
export * from "./identifiers.js";
export * from "./json-depth.js";
export * from "./kv.js";
export * from "./launcher.js";
export * from "./llm.js";
export * from "./llm-main.js";
export * from "./messaging.js";
export * from "./notifications.js";
export * from "./peers.js";
export * from "./receipts.js";
export * from "./sandbox.js";
export * from "./schemas.js";
export * from "./session-control.js";
export * from "./session-status.js";
export * from "./text.js";
export * from "./topics.js";
export * from "./transcript-path.js";
export * from "./transcript-select.js";
export * from "./transcripts.js";
export * from "./translate.js";
export * from "./upstream.js";
export * from "./validate.js";

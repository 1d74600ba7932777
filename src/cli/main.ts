#!/usr/bin/env node
// The `ccmsg` command. Command groups live in their own modules and are loaded
// on demand, so a command pays only for what it uses.
import { PROTOCOL_VERSION } from "../contract/constants.js";

const VERSION = "0.1.0";
const [command] = process.argv.slice(2);
if (command === "--version" || command === "version") {
  process.stdout.write(`ccmsg ${VERSION} (wire generation ${PROTOCOL_VERSION})\n`);
} else {
  process.stderr.write("usage: ccmsg --version\n");
  process.exit(command === undefined || command === "help" || command === "--help" ? 0 : 1);
}

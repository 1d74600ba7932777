import type { FastifyReply } from "fastify";

/** A JSON answer from one of the instance's HTTP routes: never cached (it
 * describes the instance now, and may be a person's data), one line. */
export function sendJson(reply: FastifyReply, status: number, body: unknown) {
  return reply
    .code(status)
    .header("content-type", "application/json; charset=utf-8")
    .header("cache-control", "no-store")
    .send(`${JSON.stringify(body)}\n`);
}

import type { FastifyReply, FastifyRequest } from "fastify";

/** A JSON answer from one of the instance's HTTP routes: never cached (it
 * describes the instance now, and may be a person's data), one line. */
export function sendJson(reply: FastifyReply, status: number, body: unknown) {
  return reply
    .code(status)
    .header("content-type", "application/json; charset=utf-8")
    .header("cache-control", "no-store")
    .send(`${JSON.stringify(body)}\n`);
}

/** The error handler of a route that reads a JSON body before anything
 * else: a body that cannot be read (too large, not JSON) is the caller's. */
export function answerUnreadableBody(
  error: { statusCode?: number; message: string },
  _req: FastifyRequest,
  reply: FastifyReply,
) {
  return reply.code(error.statusCode === 413 ? 413 : 400).send({
    ok: false,
    error: { code: "bad_request", msg: `the body could not be read: ${error.message}` },
  });
}

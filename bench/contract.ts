import {
  FIXTURE_IDS,
  fixture,
  HUD_FIXTURES,
  OP_FIXTURES,
  TOPIC_FIXTURES,
} from "../src/contract/fixtures/index.js";
import {
  HudStatus,
  OP_SCHEMAS,
  PeersFrame,
  requestErrors,
  validator,
} from "../src/contract/index.js";
import { nsPerOp, round } from "./measure.js";

/** Validation cost per frame: what dispatch pays for every request and what a
 * subscriber pays to check a frame. Target: < 2 µs per message_send request. */
export function benchContract() {
  const send = fixture(OP_FIXTURES.message_send.request);
  const sendCheck = validator(OP_SCHEMAS.message_send.request);

  const peers = fixture(TOPIC_FIXTURES.peers[0]!) as { data: { peers: Record<string, unknown>[] } };
  const row = peers.data.peers[0]!;
  peers.data.peers = Array.from({ length: 200 }, (_, i) => ({
    ...row,
    sid: `${i.toString(16).padStart(8, "0")}-0000-4000-8000-${FIXTURE_IDS.sidA.slice(-12)}`,
    title: `session ${i}`,
  }));
  const peersCheck = validator(PeersFrame);
  const hud = fixture(HUD_FIXTURES.complete);
  const hudCheck = validator(HudStatus);

  if (!sendCheck.Check(send) || !peersCheck.Check(peers) || !hudCheck.Check(hud)) {
    throw new Error("benchmark inputs do not validate");
  }
  const sendNs = nsPerOp(() => sendCheck.Check(send), 200_000);
  return {
    message_send_request_ns: round(sendNs),
    message_send_request_with_rules_ns: round(
      nsPerOp(() => requestErrors("message_send", send), 200_000),
    ),
    peers_frame_200_rows_ns: round(nsPerOp(() => peersCheck.Check(peers), 2_000)),
    hud_payload_ns: round(nsPerOp(() => hudCheck.Check(hud), 50_000)),
    target_message_send_ns: 2000,
    meets_target: sendNs < 2000,
  };
}

import { ATTENTION_GRANTS_NS, type AttentionGrant, parseGrant } from "../../contract/attention.js";
import type { Clock } from "../../util/clock.js";
import type { Kv } from "../kv/kv.js";

/**
 * The person's grants (DR-0062): a session granted may read and decide other
 * sessions' attention items. Kept in KV namespace `attention_grants` (key:
 * the granted sid), so they are on disk before the grant is answered and
 * reach every linked instance by KV replication: the instance that holds a
 * hook authorises a forwarded decision from its own copy. A revocation is
 * a KV removal, replicated the same way.
 */
export class AttentionGrants {
  constructor(
    private readonly kv: Pick<Kv, "list" | "write" | "delete">,
    private readonly clock: Clock,
    private readonly instanceId: string,
    private readonly label: (sid: string) => string | undefined,
  ) {}

  async grant(sid: string): Promise<AttentionGrant> {
    const label = this.label(sid);
    const grant: AttentionGrant = {
      sid,
      ...(label === undefined ? {} : { sid_label: label }),
      granted_at: this.clock.now(),
      instance: this.instanceId,
    };
    await this.kv.write(ATTENTION_GRANTS_NS, sid, grant);
    return grant;
  }

  async revoke(sid: string): Promise<boolean> {
    const had = this.granted(sid);
    await this.kv.delete(ATTENTION_GRANTS_NS, sid);
    return had;
  }

  granted(sid: string): boolean {
    return this.list().some((g) => g.sid === sid);
  }

  /** Oldest grant first. */
  list(): AttentionGrant[] {
    const out: AttentionGrant[] = [];
    for (const e of this.kv.list(ATTENTION_GRANTS_NS)) {
      const g = "value" in e ? parseGrant(e.value) : undefined;
      // Keyed by the sid it grants: a value naming another sid grants nothing.
      if (g !== undefined && g.sid === e.key) out.push(g);
    }
    return out.sort((a, b) => a.granted_at - b.granted_at);
  }
}

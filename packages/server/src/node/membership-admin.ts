import { randomBytes } from 'node:crypto';
import {
  changeProblem,
  MAX_MEMBER_ID,
  type ConfigEntry,
  type MembershipChange,
  type ReconfigOutcome,
  type ReconfigRequest,
} from '@creek/replica/cab/configuration.js';
import type { ReplicaHost } from '@creek/replica/host/replica-host.js';

/** How long an admin request waits for its change to be decided and in force here. */
export const MEMBERSHIP_TIMEOUT_MS = 15_000;

/** An HTTP answer: status code and JSON body. */
export interface AdminAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** A configuration as `GET /members` shows it. */
export interface ConfigView {
  /** The first consensus instance it governs. */
  readonly from: number;
  readonly members: readonly { readonly id: number; readonly url: string }[];
  /** Ids removed before: never members again. */
  readonly retired: readonly number[];
}

/** `GET /members`: what this replica knows of the cluster's membership. */
export interface MembersView {
  /** The replica that answers. */
  readonly replica: number;
  readonly leader: number | null;
  /** The configuration in force at this replica's decided prefix. */
  readonly current: ConfigView;
  /** The newest configuration decided (the same as `current` unless a change is on its way). */
  readonly latest: ConfigView;
  /** A change is decided and not in force here yet: the next one waits for it. */
  readonly changing: boolean;
}

const URL = /^wss?:\/\/[^\s/,]+$/;

function view(e: ConfigEntry): ConfigView {
  return {
    from: e.from,
    members: e.members.map((m) => ({ id: m.id, url: m.address })),
    retired: e.retired,
  };
}

/**
 * The membership admin API of one replica (`GET /members`, `POST /admin/members/add|remove`):
 * checks a change against the newest configuration, hands it to the host (which orders it through
 * the log: cab/configuration.ts), and answers once it is decided and in force here, or refused,
 * or after MEMBERSHIP_TIMEOUT_MS.
 */
export class MembershipAdmin {
  constructor(
    private readonly host: () => ReplicaHost,
    /** Hands a request to the host inside a turn of the runtime (its outputs then leave). */
    private readonly submit: (request: ReconfigRequest) => void,
    /** Whether peer URLs must be wss:// (this replica serves TLS). */
    private readonly tls: boolean,
    private readonly timeoutMs = MEMBERSHIP_TIMEOUT_MS,
  ) {}

  view(): MembersView {
    const h = this.host();
    const m = h.membership();
    return {
      replica: h.id,
      leader: h.status().leader,
      current: view(m.current),
      latest: view(m.latest),
      changing: m.latest.from > m.decidedBelow,
    };
  }

  /** `POST /admin/members/<action>?id=N[&url=ws://host:port]`. */
  async change(action: string, params: URLSearchParams): Promise<AdminAnswer> {
    const parsed = this.parse(action, params);
    if ('error' in parsed) return { status: parsed.status, body: { error: parsed.error } };
    const m = this.host().membership();
    if (m.latest.from > m.decidedBelow)
      return {
        status: 409,
        body: {
          error: `a membership change is on its way (in force from instance ${m.latest.from}); changes go one at a time: try again once it is (GET /members)`,
        },
      };
    const problem = changeProblem(m.latest, parsed.change);
    if (problem !== null) return { status: 409, body: { error: problem } };
    const request = { change: parsed.change, nonce: randomBytes(12).toString('hex') };
    this.submit(request);
    return this.await(request);
  }

  private parse(
    action: string,
    params: URLSearchParams,
  ): { change: MembershipChange } | { status: number; error: string } {
    const idText = params.get('id') ?? '';
    const id = /^\d{1,3}$/.test(idText) ? Number(idText) : NaN;
    if (!(id >= 0 && id <= MAX_MEMBER_ID))
      return {
        status: 400,
        error: `${action} needs ?id=<replica id, 0-${MAX_MEMBER_ID}>, not ${JSON.stringify(idText.slice(0, 20))}`,
      };
    if (action === 'remove') return { change: { op: 'remove', id } };
    if (action !== 'add')
      return { status: 404, error: 'membership actions: add (?id=&url=), remove (?id=)' };
    const url = (params.get('url') ?? '').replace(/\/$/, '');
    if (!URL.test(url) || url.length > 2048)
      return {
        status: 400,
        error: `add needs &url=<where its peers reach it, e.g. ws://10.0.0.4:7100>, not ${JSON.stringify(url.slice(0, 60))}`,
      };
    if (this.tls !== url.startsWith('wss://'))
      return {
        status: 400,
        error: this.tls
          ? 'this cluster speaks TLS: the new replica needs a wss:// URL'
          : 'this cluster does not speak TLS: the new replica needs a ws:// URL',
      };
    return { change: { op: 'add', member: { id, address: url } } };
  }

  /** Until the change is decided and in force here (or this replica was the one removed). */
  private async await(request: ReconfigRequest): Promise<AdminAnswer> {
    const deadline = Date.now() + this.timeoutMs;
    let outcome: ReconfigOutcome | undefined;
    while (Date.now() < deadline) {
      const h = this.host();
      outcome ??= h.reconfigOutcome(request.nonce);
      if (outcome !== undefined && !outcome.applied)
        return { status: 409, body: { error: outcome.reason, decidedAt: outcome.decidedAt } };
      if (outcome !== undefined && outcome.applied) {
        const removedSelf =
          request.change.op === 'remove' && request.change.id === h.id && h.halted !== null;
        if (removedSelf || h.membership().decidedBelow >= outcome.entry.from)
          return {
            status: 200,
            body: {
              ok: true,
              decidedAt: outcome.decidedAt,
              members: view(outcome.entry),
            },
          };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    return {
      status: 503,
      body: {
        error:
          outcome === undefined
            ? `not decided within ${this.timeoutMs / 1000} s: no leader, or no majority of the members up; it may still be decided (GET /members)`
            : `decided, but not in force at this replica within ${this.timeoutMs / 1000} s (GET /members)`,
      },
    };
  }
}

import { CLOSE_OP, NOOP_OP } from '@creek/app';
import type { InvokeRequest } from '@creek/replica/core/replica.js';
import type { Response } from '@creek/replica/core/types.js';
import { ClientConnections } from '@creek/replica/host/client-connections.js';
import type { ReplicaUrls } from '@creek/protocol';
import type { ReplicaHost } from '@creek/replica/host/replica-host.js';
import { simContextMac } from './context-mac.js';
import { complete } from './clients.js';
import { simUrl } from './sim-url.js';
import type { SimClientLinks } from './client-links.js';
import { takesOps, type SimEndpoint, type SimProcess, type StepHost } from './process.js';
import { recordResponse, type Invocation } from './run-record.js';
import type { RunState } from './run-state.js';

/** What a client is told by a replica that takes no ops now (the runtime says why in more words). */
const UNAVAILABLE = 'this replica takes no client ops now: try another replica';

/**
 * The replicas' side of their client connections in an 'sdk' run: per process, the same pure
 * endpoint the runtime drives (ClientConnections, as node/client-endpoint.ts does), made anew with
 * each host. Its invocations go to the host, and each is recorded as the replica saw it
 * (RunRecord.invocations, which the checkers of the replicas read); the responses the host
 * releases are recorded, then reach the endpoint after the host's turn, as in the runtime.
 */
export class SimEndpoints {
  /** Numbers the recorded invocations across endpoints (Invocation.tag). */
  private nextTag = 1;

  constructor(
    private readonly run: RunState,
    private readonly links: SimClientLinks,
    private readonly step: StepHost,
    /** Crashes a replica for good (a 'lose' fault waits for its next strong invocation). */
    private readonly loseForGood: (p: SimProcess) => void,
  ) {}

  /** `p` runs a new host: a new endpoint, with no connection yet. */
  started(p: SimProcess): void {
    const run = this.run;
    const host = p.host;
    const ops = new Map<number, Invocation>();
    const replicas = p.seeds ?? run.ids;
    // The members' client URLs as the sessions name replicas (SdkClients), anew when they change.
    let members: { ids: readonly number[]; urls: ReplicaUrls } | null = null;
    const memberUrls = (): ReplicaUrls => {
      const ids = host.peerIds();
      if (members?.ids !== ids) members = { ids, urls: ids.map((id) => ({ id, url: simUrl(id) })) };
      return members.urls;
    };
    const connections: ClientConnections<number> = new ClientConnections<number>({
      replicaId: p.id,
      opNames: () => run.app.names().filter((n) => n !== NOOP_OP && n !== CLOSE_OP),
      readOnlyOps: () => run.app.names().filter((n) => run.app.lookup(n)?.readOnly === true),
      authorize: () => true,
      ...(run.config.userTokens === true ? { verifiesTokens: true } : {}),
      invoke: (request) => this.invoke(p, endpoint, request),
      unavailable: () => (takesOps(p) && p.host === host ? null : UNAVAILABLE),
      seen: (session) => seenVector(host, replicas, session),
      received: (replica, eventNo) => host.clients.heldForClient({ replica, eventNo }),
      readsSee: (seen) => host.clients.readsSee(seen),
      changedKeys: () => host.takeChangedKeys(),
      members: memberUrls,
      observe: () => undefined,
      now: () => run.now,
      out: (conn, o) => this.links.fromReplica(p, conn, o),
      ...(run.config.unsafeDropSessions === true ? { unsafeDropSessions: true } : {}),
      ...(run.config.unsafeStableOwnOps === true ? { unsafeStableOwnOps: true } : {}),
      contextMac: simContextMac,
      ...(run.config.unsafeIgnoreAfter === true ? { unsafeIgnoreAfter: true } : {}),
      ...(run.config.unsafeAnswerUnheld === true ? { unsafeAnswerUnheld: true } : {}),
    });
    const endpoint: SimEndpoint = { connections, host, ops };
    p.endpoint = endpoint;
  }

  /**
   * The endpoint hands an invocation to its host. A client's op is recorded as the replica takes
   * it (a live query's read is not: its results are checked as they reach the client).
   */
  private invoke(p: SimProcess, endpoint: SimEndpoint, request: InvokeRequest): void {
    const run = this.run;
    if (!p.up || p.endpoint !== endpoint || p.host.halted !== null) return;
    if (request.watch === undefined) {
      const user =
        this.links.delivering === null ? request.user : this.links.delivering.client.user;
      const inv: Invocation = {
        replica: p.id,
        tag: this.nextTag++,
        op: request.op,
        args: request.args as Invocation['args'],
        strong: request.strong,
        invokedAt: run.now,
        id: null,
        responses: [],
        abandoned: false,
        ...(request.session === undefined ? {} : { session: request.session }),
        // Whom its client signed in as (the replica's word would hide a replica that lost it).
        ...(user === undefined ? {} : { user }),
        ...(p.wipes > 0 ? { disk: p.wipes } : {}),
        ...(this.links.delivering === null ? {} : { sentAt: this.links.delivering.sentAt }),
      };
      run.record.invocations.push(inv);
      endpoint.ops.set(request.tag, inv);
    }
    this.step(p, { kind: 'invoke', now: run.physical(p.id), request });
    if (request.strong && request.watch === undefined && p.loseAfterStrong) {
      // As the model's clients (SimClients.submit): it dies while its strong op may be on its way.
      p.loseAfterStrong = false;
      run.events.push(run.now + run.prngs.fault.float(0, 2 * run.params.network.maxDelayMs), () =>
        this.loseForGood(p),
      );
    }
  }

  /**
   * A response `p`'s host released: recorded for the op it answers, then handed to the endpoint
   * after the host's turn (the runtime's answers wait for the turn's end).
   */
  respond(p: SimProcess, o: Response): void {
    const endpoint = p.endpoint;
    if (endpoint === null) return;
    const inv = endpoint.ops.get(o.tag);
    // A departed replica's answers are not held against it (the model's clients left it too).
    if (inv !== undefined && !(p.clientsLeft && inv.abandoned)) recordResponse(this.run, inv, o);
    this.run.events.push(this.run.now, () => {
      if (p.endpoint === endpoint) endpoint.connections.respond(o);
    });
  }

  /** `p` is down: its endpoint with it, and the ops waiting there have no client any more. */
  crashed(p: SimProcess): void {
    this.leave(p);
    p.endpoint = null;
  }

  /** `p` takes no client op any more: what waits there is not held against it. */
  departed(p: SimProcess): void {
    this.leave(p);
  }

  private leave(p: SimProcess): void {
    for (const inv of p.endpoint?.ops.values() ?? []) if (!complete(inv)) inv.abandoned = true;
  }

  /** After each event: every endpoint ends its turn (committed frames, live queries, welcomes). */
  afterEvent(): void {
    for (const p of this.run.procs)
      if (p.up && p.endpoint !== null && p.host.halted === null) p.endpoint.connections.afterTurn();
  }

  /** Reads of live queries still on their way at some endpoint. */
  get reading(): boolean {
    return this.run.procs.some((p) => p.endpoint !== null && p.endpoint.connections.reading > 0);
  }
}

/**
 * What a session is told this replica has (views' `seen`), as the runtime's ReplicaServer works it
 * out (ReplicaHost.clients.seenVector): for the replica ids of its configuration and members.
 */
function seenVector(
  host: ReplicaHost,
  replicas: readonly number[],
  session: string | null,
): number[] {
  return host.clients.seenVector([...new Set([...replicas, ...host.peerIds()])], session);
}

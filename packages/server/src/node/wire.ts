import type { PeerFrame, WireReq } from '@creek/protocol';
import type { PaxosMessage } from '@creek/replica/cab/messages.js';
import { DottedVersionVector } from '@creek/replica/core/dvv.js';
import { toFrozenJson, type User } from '@creek/app';
import type { Req } from '@creek/replica/core/types.js';
import type { DivergenceMessage } from '@creek/replica/host/divergence.js';
import type { PeerMessage } from '@creek/replica/host/peer-message.js';
import type { TransferMessage, TransferPart } from '@creek/replica/host/state-transfer.js';

type WireTransfer = Extract<PeerFrame, { t: 'transfer' }>['msg'];
type WireTransferPart = Extract<WireTransfer, { type: 'chunk' }>['part'];

/** In-process Reqs carry a DottedVersionVector and frozen args; on the wire both are plain JSON. */
export function reqToWire(req: Req): WireReq {
  return { ...req, causalCtx: req.causalCtx === null ? null : req.causalCtx.toJSON() };
}

export function reqFromWire(w: WireReq): Req {
  return {
    ts: w.ts,
    id: w.id,
    op: w.op,
    args: toFrozenJson(w.args),
    strong: w.strong,
    causalCtx: w.causalCtx === null ? null : DottedVersionVector.fromJSON(w.causalCtx),
    ...(w.session === undefined ? {} : { session: w.session }),
    // Frozen like the args: every execution of the op reads this one object (`tx.user`).
    ...(w.user === undefined ? {} : { user: toFrozenJson(w.user) as unknown as User }),
  };
}

/** A host's message as a peer frame. */
export function peerMessageToFrame(
  m: PeerMessage,
):
  | { t: 'gossip'; msg: unknown }
  | { t: 'paxos'; msg: PaxosMessage }
  | { t: 'transfer'; msg: unknown }
  | { t: 'divergence'; msg: DivergenceMessage } {
  if (m.kind === 'paxos') return { t: 'paxos', msg: m.msg };
  if (m.kind === 'divergence') return { t: 'divergence', msg: m.msg };
  if (m.kind === 'transfer') return { t: 'transfer', msg: transferToWire(m.msg) };
  const msg =
    m.msg.kind === 'push' ? { kind: 'push' as const, reqs: m.msg.reqs.map(reqToWire) } : m.msg;
  return { t: 'gossip', msg };
}

function transferToWire(m: TransferMessage): unknown {
  if (m.type !== 'chunk' || (m.part.kind !== 'reqs' && m.part.kind !== 'held')) return m;
  return { ...m, part: { kind: m.part.kind, reqs: m.part.reqs.map(reqToWire) } };
}

function transferFromWire(m: WireTransfer): TransferMessage {
  if (m.type !== 'chunk') return m;
  return { ...m, part: transferPartFromWire(m.part) };
}

/**
 * A state-transfer chunk's part as it travels, and as the receiver keeps it on disk
 * (record-codec.ts), back into the host's: live Reqs, frozen state values.
 */
export function transferPartFromWire(p: WireTransferPart): TransferPart {
  if (p.kind === 'reqs' || p.kind === 'held')
    return { kind: p.kind, reqs: p.reqs.map(reqFromWire) };
  if (p.kind === 'state')
    return { kind: 'state', entries: p.entries.map(([k, v]) => [k, toFrozenJson(v)] as const) };
  return p;
}

/** A validated peer frame (gossip, paxos, transfer or divergence) back into a host message. */
export function peerMessageFromFrame(
  frame: Extract<PeerFrame, { t: 'gossip' | 'paxos' | 'transfer' | 'divergence' }>,
): PeerMessage {
  if (frame.t === 'paxos') return { kind: 'paxos', msg: frame.msg };
  if (frame.t === 'divergence') return { kind: 'divergence', msg: frame.msg };
  if (frame.t === 'transfer') return { kind: 'transfer', msg: transferFromWire(frame.msg) };
  const g = frame.msg;
  return {
    kind: 'gossip',
    msg: g.kind === 'push' ? { kind: 'push', reqs: g.reqs.map(reqFromWire) } : g,
  };
}

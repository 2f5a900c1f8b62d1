import { isJsonValue, MAX_USER_ID_CHARS } from './json-value.js';
import type { PeerFrame } from './peer.js';

/**
 * The peer frames a replica receives by the thousand each second under load — gossip pushes of
 * Reqs and summaries, and the Paxos phase-2, heartbeat and read-index messages, alone or in a batch — checked by
 * hand against PeerFrameSchema's rules before Zod is asked.
 *
 * Why: every Req reaches every replica, so its validation is paid n − 1 times per op, on machines
 * the replicas share. Zod's walk of a Req was about 3 µs of the 6–8 µs that encoding and decoding
 * a one-Req push cost in all (`npx tsx bench/src/codec.ts`, encode + decode per second, Zod alone
 * against this check first, same run, 2-core machine): a push of 1 Req 124k → 162k, of 32 Reqs
 * 5.2k → 9.6k, a Paxos accept of 1 id 271k → 384k, of 256 ids 3.6k → 5.6k.
 *
 * The contract, which `test/peer-fast-path.test.ts` checks against the schema on arbitrary and
 * mutated frames: the frame is returned, as it is, only when it has exactly the fields its schema
 * names (none missing, none unknown) and each passes the schema's own check; anything else gives
 * null, and the caller validates with Zod as before (which also words the refusal). So it never
 * accepts what Zod refuses, and what it accepts equals what Zod would output: Zod's output is a
 * copy without unknown keys, and a frame with none is its own copy. Strings are measured in UTF-16
 * units, which Zod counts in code points: a string whose units fit fits, and one that only fits in
 * code points goes to Zod.
 */
export function fastPeerFrame(json: unknown): PeerFrame | null {
  if (!isRecord(json)) return null;
  if (json.t === 'batch') {
    if (!hasKeys(json, BATCH_KEYS)) return null;
    const frames = json.frames;
    if (!Array.isArray(frames) || frames.length > MAX_BATCH) return null;
    for (let i = 0; i < frames.length; i++) if (!isHotFrame(frames[i])) return null;
    return json as PeerFrame;
  }
  return isHotFrame(json) ? (json as PeerFrame) : null;
}

/** PeerFrameSchema's bound on a batch's frames. */
const MAX_BATCH = 10_000;

type Obj = Record<string, unknown>;

const BATCH_KEYS = ['t', 'frames'];
const FRAME_KEYS = ['t', 'msg'];
const PUSH_KEYS = ['kind', 'reqs'];
const SUMMARY_KEYS = ['kind', 'seen', 'reply'];
const SUMMARY_OPTIONAL = ['wanted', 'pruned', 'boot', 'echo', 'origin', 'digest'];
const DIGEST_CLAIM_KEYS = ['at', 'digest'];
const REQ_KEYS = ['ts', 'id', 'op', 'args', 'strong', 'causalCtx'];
const REQ_OPTIONAL = ['session', 'user'];
const SESSION_KEYS = ['id', 'seq', 'acked'];
const USER_KEYS = ['id', 'claims'];
const OP_ID_KEYS = ['replica', 'eventNo'];
const CAST_KEYS = ['id', 'prevStrong'];
const ACCEPT_KEYS = ['type', 'ballot', 'instance', 'value'];
const ACCEPTED_KEYS = ['type', 'ballot', 'instance'];
const FORWARD_KEYS = ['type', 'casts'];
const READ_PROBE_KEYS = ['type', 'ballot', 'seq'];
const HEARTBEAT_KEYS = [
  'type',
  'ballot',
  'leading',
  'decidedBelow',
  'deliveredBelow',
  'promised',
  'knownBelow',
];
const HEARTBEAT_OPTIONAL = ['quorate'];
const NONE: readonly string[] = [];

/** SessionIdSchema's rule. */
const SESSION_ID = /^[A-Za-z0-9_-]{8,64}$/;
/** DvvSchema's key rule. */
const DIGITS = /^\d+$/;
/** A state digest: 32 hex digits. */
const DIGEST = /^[0-9a-f]{32}$/;

/** A gossip push or one of the hot Paxos messages, as a frame of its own or inside a batch. */
function isHotFrame(f: unknown): boolean {
  if (!isRecord(f) || !hasKeys(f, FRAME_KEYS)) return false;
  const msg = f.msg;
  if (!isRecord(msg)) return false;
  if (f.t === 'gossip')
    return msg.kind === 'push' ? isPush(msg) : msg.kind === 'summary' && isSummary(msg);
  if (f.t === 'paxos') return isHotPaxos(msg);
  return false;
}

function isPush(msg: Obj): boolean {
  if (!hasKeys(msg, PUSH_KEYS)) return false;
  const reqs = msg.reqs;
  if (!Array.isArray(reqs)) return false;
  for (let i = 0; i < reqs.length; i++) if (!isReq(reqs[i])) return false;
  return true;
}

function isSummary(msg: Obj): boolean {
  if (!hasKeys(msg, SUMMARY_KEYS, SUMMARY_OPTIONAL)) return false;
  if (!isDvv(msg.seen) || typeof msg.reply !== 'boolean') return false;
  const { wanted, pruned, boot, echo, origin, digest } = msg;
  if (origin !== undefined && !isNat(origin)) return false;
  // Every summary carries one (the sender's finalized state: host/divergence.ts).
  if (digest !== undefined) {
    if (!isRecord(digest) || !hasKeys(digest, DIGEST_CLAIM_KEYS) || !isNat(digest.at)) return false;
    if (typeof digest.digest !== 'string' || !DIGEST.test(digest.digest)) return false;
  }
  if (wanted !== undefined) {
    if (!Array.isArray(wanted)) return false;
    for (let i = 0; i < wanted.length; i++) if (!isOpId(wanted[i])) return false;
  }
  if (pruned !== undefined) {
    if (!isRecord(pruned)) return false;
    for (const key in pruned) if (!DIGITS.test(key) || !isNat(pruned[key])) return false;
  }
  return (boot === undefined || isNonNegative(boot)) && (echo === undefined || isNonNegative(echo));
}

/** ReqSchema. */
function isReq(q: unknown): boolean {
  return (
    isRecord(q) &&
    hasKeys(q, REQ_KEYS, REQ_OPTIONAL) &&
    isNat(q.ts) &&
    isOpId(q.id) &&
    isText(q.op, 256) &&
    typeof q.strong === 'boolean' &&
    (q.causalCtx === null || isDvv(q.causalCtx)) &&
    (q.session === undefined || isSession(q.session)) &&
    (q.user === undefined || isUser(q.user)) &&
    isJsonValue(q.args)
  );
}

/** UserSchema: the claims an object of JSON values (Zod's record keeps every key). */
function isUser(u: unknown): boolean {
  return (
    isRecord(u) &&
    hasKeys(u, USER_KEYS) &&
    typeof u.id === 'string' &&
    u.id.length >= 1 &&
    u.id.length <= MAX_USER_ID_CHARS &&
    isRecord(u.claims) &&
    isJsonValue(u.claims)
  );
}

function isSession(s: unknown): boolean {
  return (
    isRecord(s) &&
    hasKeys(s, SESSION_KEYS) &&
    typeof s.id === 'string' &&
    SESSION_ID.test(s.id) &&
    isNat(s.seq) &&
    s.seq >= 1 &&
    isNat(s.acked)
  );
}

function isHotPaxos(m: Obj): boolean {
  switch (m.type) {
    case 'accept':
      return hasKeys(m, ACCEPT_KEYS) && isNat(m.ballot) && isNat(m.instance) && isCasts(m.value);
    case 'accepted':
      return hasKeys(m, ACCEPTED_KEYS) && isNat(m.ballot) && isNat(m.instance);
    case 'forward':
      return hasKeys(m, FORWARD_KEYS) && isCasts(m.casts);
    case 'readProbe':
    case 'readAck':
      return hasKeys(m, READ_PROBE_KEYS) && isNat(m.ballot) && isNat(m.seq);
    case 'heartbeat':
      return (
        hasKeys(m, HEARTBEAT_KEYS, HEARTBEAT_OPTIONAL) &&
        isNat(m.ballot) &&
        typeof m.leading === 'boolean' &&
        (m.quorate === undefined || typeof m.quorate === 'boolean') &&
        isNat(m.decidedBelow) &&
        isNat(m.deliveredBelow) &&
        isNat(m.promised) &&
        isNat(m.knownBelow)
      );
    default:
      return false;
  }
}

/**
 * A batch of cast ids (BatchSchema) with no membership change in it: a batch with one goes to Zod
 * (rare: one per change).
 */
function isCasts(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) {
    const c: unknown = v[i];
    if (!isRecord(c) || !hasKeys(c, CAST_KEYS) || !isOpId(c.id) || !isNat(c.prevStrong))
      return false;
  }
  return true;
}

/** OpIdSchema. */
function isOpId(v: unknown): boolean {
  return (
    isRecord(v) && hasKeys(v, OP_ID_KEYS) && isNat(v.replica) && isNat(v.eventNo) && v.eventNo >= 1
  );
}

/** DvvSchema: digit keys, each a non-empty array of non-negative integers. */
function isDvv(v: unknown): boolean {
  if (!isRecord(v)) return false;
  for (const key in v) {
    if (!DIGITS.test(key)) return false;
    const dots = v[key];
    if (!Array.isArray(dots) || dots.length === 0) return false;
    for (let i = 0; i < dots.length; i++) if (!isNat(dots[i])) return false;
  }
  return true;
}

/** `z.number().int().nonnegative()`: Zod 4's int is a safe integer. */
function isNat(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** `z.number().nonnegative()`: finite (Zod's number refuses infinities). */
function isNonNegative(v: unknown): boolean {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

/** `z.string().min(1).max(max)`, in UTF-16 units (see fastPeerFrame). */
function isText(v: unknown, max: number): boolean {
  return typeof v === 'string' && v.length >= 1 && v.length <= max;
}

/** A plain object as JSON.parse makes them (not an array, not null). */
function isRecord(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `o` has every key of `required`, any of `optional`, and no other. */
function hasKeys(o: Obj, required: readonly string[], optional: readonly string[] = NONE): boolean {
  let own = 0;
  for (const _ in o) own++;
  let named = 0;
  for (let i = 0; i < required.length; i++) {
    if (o[required[i]!] === undefined) return false;
    named++;
  }
  for (let i = 0; i < optional.length; i++) if (o[optional[i]!] !== undefined) named++;
  return own === named;
}

import type { z } from 'zod';
import { ClientFrameSchema, ServerFrameSchema } from './client.js';
import type { ErrorCode } from './errors.js';
import { MAX_FRAME_BYTES } from './limits.js';
import { fastPeerFrame } from './peer-fast-path.js';
import { PeerFrameSchema } from './peer.js';

export type Decoded<T> =
  | { readonly ok: true; readonly frame: T }
  | {
      readonly ok: false;
      readonly code: ErrorCode;
      readonly message: string;
      /**
       * The refused frame's op id, when it was a JSON object with a usable one (an invoke whose
       * other fields are wrong): the answer can then name the op, whose caller would otherwise
       * wait for it forever.
       */
      readonly opId?: string;
    };

/**
 * Frames are JSON text: readable in logs and browser devtools, and native everywhere. Chosen over
 * msgpackr by measurement (bench/src/codec.ts, whose header has the table): encode + decode with
 * Zod validation of typical frames (invoke, view, gossip push of 1 and 32 Reqs, Paxos accept of 1
 * and 256 ids) ran at 0.93–1.03x JSON's ops/s with msgpack maps (≤ 1.18x in any run; Zod is 30–63%
 * of the cost, so the parser barely matters) and 0.66–1.21x with msgpackr records; frames were
 * 22–29% smaller as maps, and 3–6x smaller with records only for the 32-Req and 256-id batches.
 * Not clearly better (we asked for > 1.5x end to end or much smaller typical frames), so JSON it
 * stays; revisit if large batches come to dominate the peer links.
 */
export function encodeFrame(frame: unknown): string {
  return JSON.stringify(frame);
}

/** Deeper JSON is refused before validation (which recurses) could exhaust the stack. */
export const MAX_NESTING = 64;

/**
 * Made when a frame arrives as bytes (the server's `ws`), never for text frames: React Native's
 * engine may have no TextDecoder, and its WebSocket hands the client text.
 */
let utf8: TextDecoder | null = null;

/**
 * A refusal. Module-level, not a closure inside `decodeWith`: the server runs through tsx, whose
 * transform names every closure assigned to a binding with an `Object.defineProperty` call each
 * time it is created; here that was about a quarter of decoding an invoke frame.
 */
function bad(message: string): Decoded<never> {
  return { ok: false, code: 'bad-frame', message };
}

/** A refusal of a parsed frame, naming its op id when it has a usable one (see Decoded). */
function badFrame(json: unknown, message: string): Decoded<never> {
  const opId = opIdOf(json);
  return opId === undefined ? bad(message) : { ok: false, code: 'bad-frame', message, opId };
}

/**
 * A frame's own string `opId` of 1 to 128 characters (InvokeSchema's bounds, in code points as
 * Zod counts them), if it has one. Only the top level is read, so a frame refused for its nesting
 * costs nothing more here.
 */
function opIdOf(json: unknown): string | undefined {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  if (!Object.prototype.hasOwnProperty.call(json, 'opId')) return undefined;
  const opId = (json as { opId: unknown }).opId;
  if (typeof opId !== 'string' || opId.length === 0 || opId.length > 2 * 128) return undefined;
  return [...opId].length <= 128 ? opId : undefined;
}

/**
 * `fast`, where given, may vouch for a parsed frame before the schema is asked (it returns the
 * frame only if the schema would output it unchanged: see peer-fast-path.ts); null means "ask Zod".
 */
function decodeWith<S extends z.ZodType>(
  schema: S,
  data: unknown,
  fast?: (json: unknown) => z.output<S> | null,
): Decoded<z.output<S>> {
  let text: string;
  if (typeof data === 'string') {
    const bytes = utf8Length(data);
    if (bytes > MAX_FRAME_BYTES)
      return bad(`frame of ${bytes} bytes exceeds the limit of ${MAX_FRAME_BYTES}`);
    text = data;
  } else if (data instanceof Uint8Array) {
    if (data.byteLength > MAX_FRAME_BYTES)
      return bad(`frame of ${data.byteLength} bytes exceeds the limit of ${MAX_FRAME_BYTES}`);
    try {
      utf8 ??= new TextDecoder('utf-8', { fatal: true });
      text = utf8.decode(data);
    } catch {
      return bad('frame is not valid UTF-8');
    }
  } else {
    return bad('frames must be JSON text');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return bad('frame is not valid JSON');
  }
  const shape = checkShape(json);
  if (shape !== null) return badFrame(json, shape);
  const vouched = fast?.(json) ?? null;
  if (vouched !== null) return { ok: true, frame: vouched };
  let parsed: ReturnType<S['safeParse']>;
  try {
    parsed = schema.safeParse(json) as ReturnType<S['safeParse']>;
  } catch {
    return badFrame(json, 'frame could not be validated');
  }
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const issue = first === undefined ? undefined : specific(first, json);
    const where =
      issue === undefined || issue.path.length === 0 ? 'frame' : issue.path.map(String).join('.');
    return badFrame(
      json,
      `invalid frame: ${where}: ${issue?.message ?? 'does not match the protocol'}`,
    );
  }
  return { ok: true, frame: parsed.data as z.output<S> };
}

/**
 * A union's issue names the field at fault in the alternative the frame meant (a batch entry
 * that is neither an op id nor a membership change says which op-id field is wrong), not just
 * that no alternative matched: the one alternative whose issue is about a field the frame has,
 * or, when none is, the first (the most common form). When several are, it stays the union's.
 */
function specific(
  issue: z.core.$ZodIssue,
  root: unknown,
): { path: PropertyKey[]; message: string } {
  if (issue.code === 'invalid_union') {
    const at = valueAt(root, issue.path);
    const inner = issue.errors.flatMap((b) => (b[0] === undefined ? [] : [specific(b[0], at)]));
    const present = inner.filter(
      (i) => i.path.length > 0 && valueAt(at, i.path.slice(0, 1)) !== undefined,
    );
    const best = present.length === 0 ? inner.slice(0, 1) : present;
    if (best.length === 1 && best[0]!.path.length > 0)
      return { path: [...issue.path, ...best[0]!.path], message: best[0]!.message };
  }
  return { path: issue.path, message: issue.message };
}

/** The value at `path` inside `value`, or undefined. */
function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let v = value;
  for (const key of path) {
    if (typeof v !== 'object' || v === null || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/**
 * Iteratively (no recursion) refuses nesting deeper than MAX_NESTING and `__proto__` keys, which
 * validation would silently drop, so an op would run on other arguments than the client sent.
 */
function checkShape(root: unknown): string | null {
  // Two parallel stacks rather than one of {value, depth} objects: every frame passes here, and
  // an object per node was garbage for nothing.
  const values: unknown[] = [root];
  const depths: number[] = [0];
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_NESTING) return `frame is nested deeper than ${MAX_NESTING} levels`;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const v: unknown = value[i];
        // Scalars need no visit: skipping them here keeps most pushes off the stacks.
        if (typeof v === 'object' && v !== null) {
          values.push(v);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    for (const key in value) {
      if (key === '__proto__') return 'a "__proto__" key is not allowed in a frame';
      const v: unknown = (value as Record<string, unknown>)[key];
      if (typeof v === 'object' && v !== null) {
        values.push(v);
        depths.push(depth + 1);
      }
    }
  }
  return null;
}

/** The UTF-8 length of a string, without encoding it. */
function utf8Length(s: string): number {
  if (s.length * 3 <= MAX_FRAME_BYTES) return s.length; // cannot exceed the limit; exact size not needed
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

export const decodeClientFrame = (data: unknown) => decodeWith(ClientFrameSchema, data);
export const decodeServerFrame = (data: unknown) => decodeWith(ServerFrameSchema, data);
export const decodePeerFrame = (data: unknown) => decodeWith(PeerFrameSchema, data, fastPeerFrame);

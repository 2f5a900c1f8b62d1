import type { z } from 'zod';
import { ClientFrameSchema, ServerFrameSchema } from './client.js';
import type { ErrorCode } from './errors.js';
import { MAX_FRAME_BYTES } from './limits.js';
import { PeerFrameSchema } from './peer.js';

export type Decoded<T> =
  | { readonly ok: true; readonly frame: T }
  | { readonly ok: false; readonly code: ErrorCode; readonly message: string };

/**
 * Frames are JSON text for now: readable in logs and browser devtools, and native everywhere. The
 * choice against a binary encoding (msgpackr) is still to be made by measurement.
 */
export function encodeFrame(frame: unknown): string {
  return JSON.stringify(frame);
}

function decodeWith<S extends z.ZodType>(schema: S, data: unknown): Decoded<z.output<S>> {
  const text =
    typeof data === 'string'
      ? data
      : data instanceof Uint8Array
        ? new TextDecoder().decode(data)
        : null;
  if (text === null) return { ok: false, code: 'bad-frame', message: 'frames must be JSON text' };
  if (text.length > MAX_FRAME_BYTES) {
    return {
      ok: false,
      code: 'bad-frame',
      message: `frame of ${text.length} bytes exceeds the limit of ${MAX_FRAME_BYTES}`,
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, code: 'bad-frame', message: 'frame is not valid JSON' };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where =
      issue === undefined || issue.path.length === 0 ? 'frame' : issue.path.map(String).join('.');
    return {
      ok: false,
      code: 'bad-frame',
      message: `invalid frame: ${where}: ${issue?.message ?? 'does not match the protocol'}`,
    };
  }
  return { ok: true, frame: parsed.data };
}

export const decodeClientFrame = (data: unknown) => decodeWith(ClientFrameSchema, data);
export const decodeServerFrame = (data: unknown) => decodeWith(ServerFrameSchema, data);
export const decodePeerFrame = (data: unknown) => decodeWith(PeerFrameSchema, data);

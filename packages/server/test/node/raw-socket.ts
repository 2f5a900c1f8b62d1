import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

/**
 * WebSocket below the `ws` library: a hand-made upgrade and hand-made frames, so tests can send
 * what no well-behaved client would (invalid UTF-8, lying lengths, reserved bits, bad opcodes).
 */
export interface RawSocket {
  readonly socket: Socket;
  /** The first line of the server's answer to the upgrade (e.g. `HTTP/1.1 101 Switching Protocols`). */
  readonly status: string;
  /** Everything received after the upgrade answer. */
  readonly received: Buffer[];
  /** The frames parsed from `received` so far (a server's frames are not masked). */
  readonly frames: ServerFrame[];
  /** Resolves when the server closed the TCP connection. */
  readonly closed: Promise<void>;
}

/** A frame the server sent. */
export interface ServerFrame {
  readonly opcode: number;
  readonly payload: Buffer;
}

export interface RawOptions {
  readonly host?: string;
  /** Source address (any of 127.0.0.0/8 on Linux): a test can be many remote addresses. */
  readonly localAddress?: string;
}

/**
 * Opens a TCP connection and sends an upgrade request for `path`; resolves with the answer. After a
 * 101 it parses the server's frames and answers a close frame with one, as a client must (RFC 6455
 * §5.5.1), so the server closes at once instead of waiting.
 */
export function rawUpgrade(port: number, path: string, o: RawOptions = {}): Promise<RawSocket> {
  const host = o.host ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    const socket = connect({
      port,
      host,
      ...(o.localAddress === undefined ? {} : { localAddress: o.localAddress }),
    });
    const received: Buffer[] = [];
    const frames: ServerFrame[] = [];
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('error', reject);
    socket.on('error', () => undefined);
    let pending = Buffer.alloc(0);
    const onFrames = (more: Buffer): void => {
      received.push(more);
      pending = Buffer.concat([pending, more]);
      for (let f = readFrame(pending); f !== null; f = readFrame(pending)) {
        pending = pending.subarray(f.size);
        frames.push(f.frame);
        if (f.frame.opcode === OP.close && !socket.destroyed)
          socket.write(frame(OP.close, f.frame.payload.subarray(0, 2)));
      }
    };
    let head = Buffer.alloc(0);
    const onData = (d: Buffer): void => {
      head = Buffer.concat([head, d]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.on('data', onFrames);
      if (end + 4 < head.length) onFrames(head.subarray(end + 4));
      resolve({
        socket,
        status: head.subarray(0, head.indexOf('\r\n')).toString(),
        received,
        frames,
        closed,
      });
    };
    socket.on('data', onData);
    socket.once('close', () =>
      resolve({ socket, status: head.toString(), received, frames, closed }),
    );
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
  });
}

/** One whole frame at the start of `b` (unmasked), and its size; null if it has not all come. */
function readFrame(b: Buffer): { frame: ServerFrame; size: number } | null {
  if (b.length < 2) return null;
  let len = b[1]! & 0x7f;
  let at = 2;
  if (len === 126) {
    if (b.length < 4) return null;
    len = b.readUInt16BE(2);
    at = 4;
  } else if (len === 127) {
    if (b.length < 10) return null;
    len = Number(b.readBigUInt64BE(2));
    at = 10;
  }
  if (b.length < at + len) return null;
  return { frame: { opcode: b[0]! & 0x0f, payload: b.subarray(at, at + len) }, size: at + len };
}

/** The code of the server's close frame, or null if it sent none (yet). */
export function closeCode(raw: RawSocket): number | null {
  const close = raw.frames.find((f) => f.opcode === OP.close);
  return close === undefined || close.payload.length < 2 ? null : close.payload.readUInt16BE(0);
}

/** The server's text frames so far, parsed as JSON. */
export function textFrames(raw: RawSocket): { t: string; code?: string }[] {
  return raw.frames
    .filter((f) => f.opcode === OP.text)
    .map((f) => JSON.parse(f.payload.toString()) as { t: string; code?: string });
}

/** A plain TCP connection to send HTTP by hand (half a request, headers one at a time). */
export function rawTcp(
  port: number,
  o: RawOptions = {},
): Promise<{ socket: Socket; received: Buffer[]; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      port,
      host: o.host ?? '127.0.0.1',
      ...(o.localAddress === undefined ? {} : { localAddress: o.localAddress }),
    });
    const received: Buffer[] = [];
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.on('data', (d: Buffer) => received.push(d));
    socket.once('error', reject);
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, received, closed }));
  });
}

export interface FrameOptions {
  readonly fin?: boolean;
  /** The three reserved bits (0-7); a server without extensions must refuse any set. */
  readonly rsv?: number;
  /** Mask the payload (clients must; default true). */
  readonly masked?: boolean;
  /** The length the header claims; default the payload's (a lie makes the server wait or refuse). */
  readonly claimedLength?: number;
}

/** One WebSocket frame, as a client would send it (masked). */
export function frame(opcode: number, payload: Buffer | string, o: FrameOptions = {}): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const len = o.claimedLength ?? body.length;
  const masked = o.masked ?? true;
  const first = ((o.fin ?? true) ? 0x80 : 0) | (((o.rsv ?? 0) & 7) << 4) | (opcode & 0x0f);
  let header: Buffer;
  if (len < 126) header = Buffer.from([first, (masked ? 0x80 : 0) | len]);
  else if (len < 0x10000) {
    header = Buffer.alloc(4);
    header[0] = first;
    header[1] = (masked ? 0x80 : 0) | 126;
    header.writeUInt16BE(len, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = first;
    header[1] = (masked ? 0x80 : 0) | 127;
    header.writeBigUInt64BE(BigInt(len), 2);
  }
  if (!masked) return Buffer.concat([header, body]);
  const mask = randomBytes(4);
  const out = Buffer.from(body);
  for (let i = 0; i < out.length; i++) out[i] = out[i]! ^ mask[i % 4]!;
  return Buffer.concat([header, mask, out]);
}

/** Opcodes (RFC 6455 §5.2). */
export const OP = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;

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
  /** Resolves when the server closed the TCP connection. */
  readonly closed: Promise<void>;
}

/** Opens a TCP connection and sends an upgrade request for `path`; resolves with the answer. */
export function rawUpgrade(port: number, path: string, host = '127.0.0.1'): Promise<RawSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    const received: Buffer[] = [];
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('error', reject);
    socket.on('error', () => undefined);
    let head = Buffer.alloc(0);
    const onData = (d: Buffer): void => {
      head = Buffer.concat([head, d]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.on('data', (more: Buffer) => received.push(more));
      if (end + 4 < head.length) received.push(head.subarray(end + 4));
      resolve({
        socket,
        status: head.subarray(0, head.indexOf('\r\n')).toString(),
        received,
        closed,
      });
    };
    socket.on('data', onData);
    socket.once('close', () => resolve({ socket, status: head.toString(), received, closed }));
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
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

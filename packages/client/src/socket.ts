/** The subset of the WebSocket API both the browser's and `ws` provide. */
export interface SocketLike {
  readyState: number;
  send(data: string): void;
  close(): void;
  // `never` parameters: the browser's WebSocket, `ws` and their subclasses all fit.
  onopen: ((ev: never) => void) | null;
  onmessage: ((ev: never) => void) | null;
  onclose: ((ev: never) => void) | null;
  onerror: ((ev: never) => void) | null;
}

/** Opens a socket to a URL (it may throw: a URL the WebSocket constructor refuses). */
export type SocketFactory = (url: string) => SocketLike;

/**
 * How the client opens sockets: with the WebSocket class it was given, with `ws` and a CA for
 * `tls`, or with the runtime's own WebSocket (`ws` on Node before 22). Rejects when there is no
 * way at all, saying why.
 */
export async function socketFactory(
  given: (new (url: string) => SocketLike) | undefined,
  tls: { readonly ca: string | Uint8Array } | undefined,
): Promise<SocketFactory> {
  if (tls !== undefined) {
    if (given !== undefined)
      throw new Error(
        'connect: give either tls or WebSocket (a WebSocket class brings its own TLS)',
      );
    // Only the `ws` package takes a CA; the browser's and Node 22's global WebSocket do not.
    const ws = await import('ws').catch(() => null);
    if (ws === null || typeof ws.default !== 'function')
      throw new Error(
        "connect: tls.ca needs Node and the 'ws' package; a browser trusts the CAs of its system",
      );
    const WS = ws.default as unknown as new (url: string, o: { ca: unknown }) => SocketLike;
    return (url) => new WS(url, { ca: tls.ca });
  }
  if (given !== undefined) return (url) => new given(url);
  const global = (globalThis as { WebSocket?: new (url: string) => SocketLike }).WebSocket;
  if (global !== undefined) return (url) => new global(url);
  // Node before 22 has no global WebSocket: use the `ws` package.
  const ws = (await import('ws')).default as unknown as new (url: string) => SocketLike;
  return (url) => new ws(url);
}

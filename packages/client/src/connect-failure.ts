/**
 * Why a WebSocket to a replica did not open, in words a developer can act on. The `ws` package
 * says why in its error event (`Unexpected server response: 404`, `socket hang up`, `connect
 * ECONNREFUSED …`); browsers say nothing, for privacy, and log the reason in the console.
 *
 * A replica accepts clients on `/client` alone (server replica-server.ts); an upgrade to any other
 * path is refused, with an HTTP status or by closing the socket. Either way the likely mistake is
 * the URL's path, so the message says what client URLs look like.
 */
export function connectFailure(url: string, message: string | undefined): string {
  const status = /Unexpected server response: (\d{3})/.exec(message ?? '')?.[1];
  const what =
    status !== undefined
      ? `the server refused the WebSocket upgrade with HTTP status ${status}`
      : message !== undefined && /socket hang up|ECONNRESET/.test(message)
        ? 'the server closed the connection during the WebSocket upgrade'
        : message !== undefined && message !== ''
          ? message
          : 'the connection failed';
  return endsInClient(url)
    ? what
    : `${what}; Creek client URLs end in /client, e.g. ${suggestion(url)}`;
}

/** The path ends in `/client` (behind a proxy it may start with more; a query may follow). */
function endsInClient(url: string): boolean {
  return /^[a-z]+:\/\/[^/?#]*(\/[^?#]*)?\/client\/?([?#].*)?$/i.test(url);
}

/** The URL's scheme and host with `/client` as its path. */
function suggestion(url: string): string {
  const origin = /^[a-z]+:\/\/[^/?#]*/i.exec(url)?.[0];
  return origin === undefined ? 'ws://127.0.0.1:7100/client' : `${origin}/client`;
}

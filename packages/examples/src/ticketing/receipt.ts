import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect, type CreekClient } from '@creek/client';
import type { TicketingApp } from './app.js';

/**
 * Server-side rendering after the browser's writes: `GET /receipt` renders the signed-in user's
 * tickets on the page server, with a client of its own, as a server-rendered page would. The
 * browser sends its user token (`authorization: Bearer …`, so the server reads as that user) and
 * its client's context token (`x-creek-context`, from `client.context()`), and the server's client
 * starts after it (`connect({ after })`): the ticket the user just bought is on the receipt even
 * when the server reads at a replica the purchase has not reached by gossip yet.
 *
 * The server's client reads at `urls[readAt]` (the last replica by default: the page buys through
 * the first), and is closed after each request; a real server would keep one per user or pass the
 * token per request.
 */
export function receiptHandler(options: {
  readonly urls: readonly string[];
  readonly token: string;
  readonly event: string;
  readonly readAt?: number;
}): (req: IncomingMessage, res: ServerResponse) => boolean {
  const at = options.readAt ?? options.urls.length - 1;
  const url = options.urls[at];
  if (url === undefined)
    throw new RangeError(`receipt: no replica ${at} among ${options.urls.length}`);
  return (req, res) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/receipt') return false;
    if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET' }).end();
      return true;
    }
    const bearer = /^Bearer ([A-Za-z0-9._~+/=-]{1,4096})$/.exec(req.headers.authorization ?? '');
    const context = req.headers['x-creek-context'];
    if (bearer === null)
      return send(res, 401, 'sign in first: send your token as authorization: Bearer …');
    if (typeof context !== 'string')
      return send(res, 400, 'send your context token (client.context()) as x-creek-context');
    let client: CreekClient<TicketingApp>;
    try {
      client = connect<TicketingApp>({
        urls: [url],
        token: options.token,
        auth: bearer[1]!,
        after: context,
        nearest: false,
        discover: false,
        connectTimeoutMs: RENDER_TIMEOUT_MS,
      });
    } catch (err) {
      // A malformed or oversized token: connect() says what is wrong with it.
      return send(res, 400, `x-creek-context: ${(err as Error).message}`);
    }
    void render(client, options.event).then(
      (html) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html),
      (err: unknown) => send(res, 502, err instanceof Error ? err.message : String(err)),
    );
    return true;
  };
}

/** How long the server's client may take, a catch-up wait included. */
const RENDER_TIMEOUT_MS = 15_000;

async function render(client: CreekClient<TicketingApp>, event: string): Promise<string> {
  try {
    const held = await client.invokeWeak(
      'tickets.mine',
      { event },
      { timeoutMs: RENDER_TIMEOUT_MS },
    );
    const items = held.map(
      (t) => `<li data-ticket="${escape(t.ticket)}">Ticket ${escape(t.ticket)}</li>`,
    );
    return items.length === 0
      ? '<p class="hint">No tickets yet.</p>'
      : `<ul>${items.join('')}</ul>`;
  } finally {
    client.close();
  }
}

function send(res: ServerResponse, status: number, message: string): true {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(message);
  return true;
}

function escape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

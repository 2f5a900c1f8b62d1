import { WebSocketServer } from 'ws';
import type { ClientEndpoint } from '../../src/node/client-endpoint.js';

/** Servers started by `serve`, for the test file's afterEach to close. */
export const servers: WebSocketServer[] = [];

/** Serves `endpoint` on a free port of 127.0.0.1; resolves with its ws:// URL once listening. */
export async function serve(endpoint: ClientEndpoint): Promise<string> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  servers.push(wss);
  endpoint.attach(wss);
  await new Promise<void>((r) => wss.once('listening', r));
  return `ws://127.0.0.1:${(wss.address() as { port: number }).port}`;
}

/** Closes every server `serve` started (call from afterEach). */
export function closeServers(): void {
  for (const s of servers.splice(0)) s.close();
}

import { Counter, Gauge, type Registry } from 'prom-client';
import type { ConnectionGuard } from './connection-guard.js';
import { VIOLATION_KINDS, type EdgeEndpoint } from './edge-violations.js';

/**
 * The connection guard's numbers in /metrics: violations per endpoint and kind (the counts the
 * endpoints keep, which /status shows too), and the unauthenticated connections held now.
 */
export function registerEdgeMetrics(
  registry: Registry,
  guard: ConnectionGuard,
  endpoints: readonly EdgeEndpoint[],
): void {
  new Counter({
    name: 'creek_edge_violations_total',
    help: 'Connections that broke the protocol or an edge limit, by endpoint and kind (see /status)',
    labelNames: ['endpoint', 'kind'],
    registers: [registry],
    collect() {
      // Set from the endpoints' counts, which only grow: the counter stays monotonic.
      this.reset();
      for (const e of endpoints)
        for (const kind of VIOLATION_KINDS)
          this.inc({ endpoint: e.name, kind }, e.violations[kind]);
    },
  });
  new Gauge({
    name: 'creek_edge_unauthenticated_connections',
    help: 'Connections past the WebSocket handshake that have not authenticated yet',
    registers: [registry],
    collect() {
      this.set(guard.unauthenticated);
    },
  });
}

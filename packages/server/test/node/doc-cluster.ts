import { createServer, type Server } from 'node:net';

/**
 * For tests that start what a page documents: ports free now, and waiting until replicas say
 * they take ops.
 */

/** `n` distinct ports free on 127.0.0.1 now (held together while found, so they differ). */
export async function freePorts(n: number): Promise<number[]> {
  const held = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Server>((resolve, reject) => {
          const s = createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = held.map((s) => (s.address() as { port: number }).port);
  await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/**
 * Resolves once every `http://host:port` answers GET /ready with 200; throws after `ms` with the
 * last answers and `context()` (the replicas' logs, say).
 */
export async function untilReady(
  urls: readonly string[],
  ms: number,
  context: () => string,
): Promise<void> {
  const deadline = Date.now() + ms;
  const last = new Map<string, string>();
  for (;;) {
    const answers = await Promise.all(
      urls.map(async (u) => {
        try {
          const r = await fetch(`${u}/ready`, { signal: AbortSignal.timeout(2_000) });
          last.set(u, `${r.status} ${await r.text()}`);
          return r.status === 200;
        } catch (e) {
          last.set(u, e instanceof Error ? e.message : String(e));
          return false;
        }
      }),
    );
    if (answers.every(Boolean)) return;
    if (Date.now() > deadline)
      throw new Error(
        `not ready within ${ms / 1000} s: ${[...last].map(([u, a]) => `${u}: ${a}`).join('; ')}\n${context()}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

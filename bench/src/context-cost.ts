/**
 * What context tokens cost (`client.context()`, `connect({ after })`), measured beside
 * bench:bytes on its cluster: the token's size, the bytes of a request and its answer, and the
 * latency a token adds to a new client's first read when every op it covers has already arrived
 * (the common case: the user's other device, a server render a moment after the browser wrote).
 *
 * The latency is the time from `connect()` to the answer of the client's first weak read, with
 * and without `after`, in alternating pairs on the same replica (so load and warm-up fall on both
 * alike); medians and p99 of each and their ratio. Without waiting for ops, the token costs the
 * replica a MAC check and the hello a few dozen bytes.
 */
import { performance } from 'node:perf_hooks';
import { connect, type CreekClient } from '@creek/client';
import type { LocalCluster } from '@creek/server/node';
import { median, quantile } from './stats.js';

export interface ContextCost {
  /** Characters of the tokens the workload's clients got, smallest and largest. */
  readonly tokenChars: { readonly min: number; readonly max: number };
  /** ms from connect() to the first read's answer, per run, without and with `after`. */
  readonly plainMs: readonly number[];
  readonly afterMs: readonly number[];
}

/** Asks each client for its token, then times `pairs` new clients' first reads at replica 0. */
export async function measureContextCost(
  cluster: LocalCluster,
  clients: readonly CreekClient[],
  pairs: number,
  progress: (line: string) => void,
): Promise<ContextCost> {
  const tokens = await Promise.all(clients.map((c) => c.context()));
  // Every op the tokens cover has reached every replica.
  await cluster.converged(60_000);
  const url = cluster.url(0);
  const firstRead = async (after: string | undefined): Promise<number> => {
    const t0 = performance.now();
    const c = connect({
      urls: [url],
      token: cluster.token,
      nearest: false,
      discover: false,
      ...(after === undefined ? {} : { after }),
    });
    try {
      await c.invokeWeak('kv.get', { key: 'k0' });
      return performance.now() - t0;
    } finally {
      c.close();
    }
  };
  const plainMs: number[] = [];
  const afterMs: number[] = [];
  // One of each first, not counted: the first connections of a process pay for its warm-up.
  await firstRead(undefined);
  await firstRead(tokens[0]);
  for (let i = 0; i < pairs; i++) {
    const token = tokens[i % tokens.length]!;
    if (i % 2 === 0) {
      plainMs.push(await firstRead(undefined));
      afterMs.push(await firstRead(token));
    } else {
      afterMs.push(await firstRead(token));
      plainMs.push(await firstRead(undefined));
    }
    if ((i + 1) % 50 === 0) progress(`bench:bytes: context tokens: ${i + 1}/${pairs} pairs`);
  }
  const sizes = tokens.map((t) => t.length);
  return {
    tokenChars: { min: Math.min(...sizes), max: Math.max(...sizes) },
    plainMs,
    afterMs,
  };
}

/** The report's lines for `cost`. */
export function describeContextCost(cost: ContextCost, replicas: number): string {
  const f = (n: number): string => n.toFixed(2);
  const p = (xs: readonly number[], q: number): number => quantile(xs, q);
  return (
    `\ncontext tokens (client.context(), connect({ after })), ${replicas} replicas\n` +
    `  token: ${cost.tokenChars.min}–${cost.tokenChars.max} characters\n` +
    `  connect() to the first read's answer, ${cost.plainMs.length} pairs at replica 0, the token's ops already there:\n` +
    `    without after: median ${f(median(cost.plainMs))} ms, p99 ${f(p(cost.plainMs, 0.99))} ms\n` +
    `    with after:    median ${f(median(cost.afterMs))} ms, p99 ${f(p(cost.afterMs, 0.99))} ms\n` +
    `    ratio: median ${f(median(cost.afterMs) / median(cost.plainMs))}×, p99 ${f(p(cost.afterMs, 0.99) / p(cost.plainMs, 0.99))}×`
  );
}

/** What an op in a shared context costs (`client.joinContext`), beside the same op outside it. */
export interface SharedContextCost {
  /** ms from invokeWeak(kv.put) to its final view, per run, outside and inside the context. */
  readonly plainMs: readonly number[];
  readonly contextMs: readonly number[];
}

/**
 * Times `pairs` weak writes by `client` to its final view, outside and inside a shared context,
 * alternating (so load and warm-up fall on both alike). Inside, each write adds a strong read of
 * the context's frontier before it and a token request and a strong merge after it.
 */
export async function measureSharedContextCost(
  client: CreekClient,
  pairs: number,
  progress: (line: string) => void,
): Promise<SharedContextCost> {
  const context = client.joinContext('bench-shared');
  const time = async (inContext: boolean, i: number): Promise<number> => {
    const t0 = performance.now();
    const args = { key: `shared/${i % 16}`, value: i };
    await (inContext ? context.invokeWeak('kv.put', args) : client.invokeWeak('kv.put', args));
    return performance.now() - t0;
  };
  const plainMs: number[] = [];
  const contextMs: number[] = [];
  await time(false, 0);
  await time(true, 0);
  for (let i = 0; i < pairs; i++) {
    if (i % 2 === 0) {
      plainMs.push(await time(false, i));
      contextMs.push(await time(true, i));
    } else {
      contextMs.push(await time(true, i));
      plainMs.push(await time(false, i));
    }
    if ((i + 1) % 50 === 0) progress(`bench:bytes: shared context: ${i + 1}/${pairs} pairs`);
  }
  return { plainMs, contextMs };
}

/** The report's lines for `cost`. */
export function describeSharedContextCost(cost: SharedContextCost): string {
  const f = (n: number): string => n.toFixed(2);
  const p = (xs: readonly number[], q: number): number => quantile(xs, q);
  return (
    `
shared contexts (client.joinContext(id)): a weak kv.put to its final view, ${cost.plainMs.length} pairs
` +
    `    outside the context: median ${f(median(cost.plainMs))} ms, p99 ${f(p(cost.plainMs, 0.99))} ms
` +
    `    in the context:      median ${f(median(cost.contextMs))} ms, p99 ${f(p(cost.contextMs, 0.99))} ms
` +
    `    ratio: median ${f(median(cost.contextMs) / median(cost.plainMs))}×, p99 ${f(p(cost.contextMs, 0.99) / p(cost.plainMs, 0.99))}×`
  );
}

/**
 * What bench:geo measures on each system, per client region: the sequential cells and the op its
 * throughput cells repeat. A client sits next to replica (or member) i, in i's region, and talks
 * to it directly; keys are its own, so regions do not contend.
 */
import { connect, type CreekClient } from '@creek/client';
import { Etcd3 } from 'etcd3';
import { untilFinal, type TimedOp } from './measure.js';

/** The kinds of op the tables compare, in their order. */
export const METRICS = [
  'weak put',
  'weak get',
  'strong put tentative',
  'strong put stable',
  'strong get',
] as const;
export type Metric = (typeof METRICS)[number];

export type SystemName = 'Creek' | 'SMR' | 'etcd';

/** One region's client of one system: its cells, and the op of its throughput cells. */
export interface RegionClient {
  readonly cells: Partial<Record<Metric, TimedOp>>;
  /** A strong put (etcd: a put), for throughput. */
  readonly put: (i: number) => PromiseLike<unknown>;
  close(): void;
}

const KEYS = 64;

/** A Creek client (speculative or SMR) of replica `at`. */
export async function creekClient(
  url: string,
  token: string,
  at: number,
  speculative: boolean,
): Promise<RegionClient & { readonly client: CreekClient }> {
  // A region's client stays at its region's replica: the probes see every replica at loopback
  // distance (clients reach them directly), so "nearest" would mean nothing here.
  const c = connect({ urls: [url], token, nearest: false });
  const key = (i: number): string => `geo/${at}/${i % KEYS}`;
  await c.invokeStrong('kv.put', { key: key(0), value: 0 });
  const strongPut: TimedOp = (i, first) =>
    untilFinal(c.invoke('kv.put', { key: key(i), value: i }), first);
  return {
    client: c,
    cells: {
      'weak put': (i) => c.invokeWeak('kv.put', { key: key(i), value: i }),
      'weak get': (i) => c.invokeWeak('kv.get', { key: key(i) }),
      // Without speculation there is no tentative answer: the stable one is the only one.
      ...(speculative
        ? { 'strong put tentative': strongPut, 'strong put stable': strongPut }
        : { 'strong put stable': (i) => c.invokeStrong('kv.put', { key: key(i), value: i }) }),
      'strong get': (i) => c.invokeStrong('kv.get', { key: key(i) }),
    },
    put: (i) => c.invokeStrong('kv.put', { key: key(i), value: i }),
    close: () => c.close(),
  };
}

/** An etcd client of member `at`: puts, and linearizable gets (etcd3's default). */
export async function etcdClient(url: string, at: number): Promise<RegionClient> {
  const e = new Etcd3({ hosts: url });
  const key = (i: number): string => `geo/${at}/${i % KEYS}`;
  await e.put(key(0)).value('0');
  const put = (i: number): Promise<unknown> => e.put(key(i)).value(String(i)).exec();
  return {
    cells: {
      'strong put stable': put,
      'strong get': (i) => e.get(key(i)).string() as Promise<unknown>,
    },
    put,
    close: () => e.close(),
  };
}

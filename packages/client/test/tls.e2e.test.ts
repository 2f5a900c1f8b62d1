import { readFileSync } from 'node:fs';
import { LocalCluster } from '@creek/server/node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeTestPki, type TestPki } from '../../server/test/node/test-ca.js';
import { connect, Unavailable } from '../src/index.js';

/** The SDK over wss:// from Node, trusting the cluster's own CA (connect's `tls.ca`). */
let pki: TestPki;
let cluster: LocalCluster;
beforeAll(async () => {
  pki = makeTestPki();
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'silent', tls: pki });
}, 60_000);
afterAll(() => cluster.stop(1_000));

it('invokes weak and strong ops over wss:// with the cluster CA', async () => {
  const creek = connect({
    urls: cluster.urls,
    token: cluster.token,
    tls: { ca: readFileSync(pki.ca, 'utf8') },
  });
  try {
    expect(cluster.urls[0]).toMatch(/^wss:/);
    await creek.invokeWeak('kv.put', { key: 'k', value: 1 });
    const final = await creek.invoke('kv.increment', { key: 'k' });
    expect(final).toBe(2);
  } finally {
    creek.close();
  }
});

it('fails with the certificate problem when the CA is not the cluster one', async () => {
  const rogue = makeTestPki('Someone else');
  const creek = connect({
    urls: [cluster.url(0)],
    token: cluster.token,
    connectTimeoutMs: 1_000,
    tls: { ca: readFileSync(rogue.ca, 'utf8') },
  });
  try {
    const err = await creek.invokeWeak('kv.get', { key: 'k' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Unavailable);
    expect(String((err as Error).message)).toMatch(/certificate/i);
  } finally {
    creek.close();
  }
});

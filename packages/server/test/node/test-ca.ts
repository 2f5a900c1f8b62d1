import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** PEM files of a certificate authority and one server certificate it signed. */
export interface TestPki {
  readonly dir: string;
  /** The CA's certificate (what replicas and clients trust). */
  readonly ca: string;
  /** A server certificate for 127.0.0.1 and localhost, signed by the CA, and its key. */
  readonly cert: string;
  readonly key: string;
}

/**
 * A fresh CA and a server certificate for 127.0.0.1, made by the openssl command line (Node can
 * verify X.509 but not issue it), valid for a day, in a temporary directory.
 */
export function makeTestPki(name = 'Creek test CA'): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'creek-pki-'));
  const f = (n: string): string => join(dir, n);
  const openssl = (...args: string[]): void => {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.pem'),
    '-days',
    '1',
    '-subj',
    `/CN=${name}`,
  );
  openssl(
    'req',
    ...ec,
    '-keyout',
    f('server.key'),
    '-out',
    f('server.csr'),
    '-subj',
    '/CN=127.0.0.1',
  );
  writeFileSync(f('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.pem'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-out',
    f('server.pem'),
    '-days',
    '1',
    '-extfile',
    f('server.ext'),
  );
  return { dir, ca: f('ca.pem'), cert: f('server.pem'), key: f('server.key') };
}

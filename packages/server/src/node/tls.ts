import type { PeerAddress } from './peer-address.js';

/** A replica's TLS material, as PEM text (`creek start --tls-cert/--tls-key/--tls-ca`). */
export interface TlsConfig {
  readonly cert: string;
  readonly key: string;
  /** The CA peers' certificates must chain to; null: the system's CAs. */
  readonly ca: string | null;
}

/**
 * A cluster is TLS everywhere or nowhere: a replica serving wss:// dials its peers over wss://,
 * and one serving ws:// dials ws://. A mix would leave a link in clear text, or never connect.
 * Returns what is wrong, or null.
 */
export function peerSchemeProblem(
  tls: TlsConfig | null,
  self: number,
  peers: readonly PeerAddress[],
): string | null {
  const want = tls === null ? 'ws:' : 'wss:';
  for (const p of peers) {
    if (p.id === self) continue;
    if (!p.url.startsWith(`${want}//`))
      return tls === null
        ? `--peers ${p.id}=${p.url}: this replica has no --tls-cert, so its peers are ws:// URLs (or give every replica --tls-cert, --tls-key and --tls-ca)`
        : `--peers ${p.id}=${p.url}: this replica serves TLS, so its peers are wss:// URLs`;
  }
  return null;
}

/**
 * What an operator should do about a failed TLS connection to a peer: the error's own words, then
 * the likely fix. Node names certificate failures by code (SELF_SIGNED_CERT_IN_CHAIN,
 * UNABLE_TO_VERIFY_LEAF_SIGNATURE, ERR_TLS_CERT_ALTNAME_INVALID, CERT_HAS_EXPIRED, …).
 */
export function explainTlsError(err: Error & { code?: string }, peer: PeerAddress): string | null {
  const code = err.code ?? '';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `TLS: peer ${peer.id}'s certificate does not name the host of ${peer.url} (${err.message}): give it a certificate whose subjectAltName has that host or IP`;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID')
    return `TLS: peer ${peer.id}'s certificate is not valid now (${code}): renew it`;
  if (
    /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code) ||
    /certificate/i.test(err.message)
  )
    return `TLS: peer ${peer.id} at ${peer.url} presented a certificate this replica does not trust (${code || err.message}): --tls-ca must hold the CA that signed every replica's certificate`;
  if (/EPROTO|wrong version number|ERR_SSL/i.test(`${code} ${err.message}`))
    return `TLS: peer ${peer.id} at ${peer.url} does not speak TLS (${err.message}): start it with --tls-cert and --tls-key, or use ws:// everywhere`;
  return null;
}

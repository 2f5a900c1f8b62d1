import type { ReplicaUrls } from '@creek/protocol';

/**
 * The members' client URLs, as a replica's welcome lists them. A replica serves its clients on the
 * port its peers reach it on (`/client` beside `/peer`), so a member's client URL is its address
 * (`ws://host:port`, as `--peers` and `creek member add --url` give it) with `/client` as its path.
 * A member whose address is not known here (empty) is left out.
 */
export function clientUrls(members: readonly { id: number; address: string }[]): ReplicaUrls {
  return members
    .filter((m) => m.address !== '')
    .map((m) => ({ id: m.id, url: `${m.address.replace(/\/+$/, '')}/client` }));
}

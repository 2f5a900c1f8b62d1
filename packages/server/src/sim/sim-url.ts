/**
 * How simulated client sessions name replicas (ClientSessionConfig.urls), and how the replicas'
 * endpoints list their members to them: `sim://<id>`.
 */
export function simUrl(id: number): string {
  return `sim://${id}`;
}

/** The replica a `sim://<id>` URL names. */
export function simReplica(url: string): number {
  return Number(url.slice('sim://'.length));
}

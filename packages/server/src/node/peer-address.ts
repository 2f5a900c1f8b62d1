/** A replica of the cluster as its peers and clients reach it. */
export interface PeerAddress {
  readonly id: number;
  /** ws://host:port */
  readonly url: string;
}

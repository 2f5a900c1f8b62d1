import type { ConnectionStatus } from '@creek/client';

const LABEL: Record<ConnectionStatus, string> = {
  connected: 'Online',
  connecting: 'Connecting…',
  offline: 'Offline: changes wait here',
  closed: 'Closed',
};

/** The client's connection state, as a user reads it (`data-status` carries the raw value). */
export function ConnectionBadge({ status }: { status: ConnectionStatus }) {
  return (
    <span className={`connection connection-${status}`} data-status={status} role="status">
      {LABEL[status]}
    </span>
  );
}

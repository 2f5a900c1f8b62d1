import { createServer } from 'node:net';

/** Whether nothing listens on `port` of `host` right now. */
export function isFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

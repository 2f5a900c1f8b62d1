import { serveVisualizer } from './serve.js';

/**
 * `npm run visualizer [-- --port 7300] [--host 127.0.0.1]`: serves the visualizer and prints its
 * URL; a seed opens with `?seed=42&replicas=5&faults=all` (what `npm run sim` prints for a failing
 * seed). Ctrl-C stops it.
 */
const USAGE = 'usage: npm run visualizer [-- --port 7300] [--host 127.0.0.1]';

function fail(message: string): never {
  console.error(`visualizer: ${message}\n${USAGE}`);
  process.exit(2);
}

const argv = process.argv.slice(2);
let port = 7300;
let host = '127.0.0.1';
for (let i = 0; i < argv.length; i++) {
  const flag = argv[i]!;
  if (flag === '--help' || flag === '-h') {
    console.log(USAGE);
    process.exit(0);
  }
  const value = argv[++i];
  if (value === undefined || value === '') fail(`${flag} needs a value`);
  if (flag === '--port') {
    if (!/^\d+$/.test(value) || Number(value) > 65_535)
      fail(`--port must be a port number from 0 to 65535, not "${value}"`);
    port = Number(value);
  } else if (flag === '--host') host = value;
  else fail(`unknown option ${flag}`);
}

try {
  const served = await serveVisualizer({ port, host });
  console.log(`visualizer: ${served.url} (a seed: ${served.url}?seed=42&replicas=3&faults=all)`);
  const close = (): void => void served.close().then(() => process.exit(0));
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
} catch (err) {
  const e = err as NodeJS.ErrnoException;
  fail(
    e.code === 'EADDRINUSE'
      ? `port ${port} on ${host} is taken: pass --port with another (0 picks a free one)`
      : e.message,
  );
}

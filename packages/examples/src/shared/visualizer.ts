import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExampleCluster } from './cluster.js';

const CLI = fileURLToPath(new URL('../../../visualizer/src/cli.ts', import.meta.url));

/**
 * The visualizer (packages/visualizer) watching an example's own cluster, for its page to link
 * to: run as its own process (`npm run visualizer -- --urls …` on a free port), with the token
 * files the cluster keeps. A cluster given with `--urls` is the operator's, whose admin token the
 * example does not hold: null.
 */
export async function visualizerFor(
  cluster: ExampleCluster,
): Promise<{ url: string; close(): void } | null> {
  const local = cluster.local;
  if (local === null) return null;
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--conditions=creek-source',
      CLI,
      '--port',
      '0',
      '--urls',
      cluster.urls.join(','),
      '--admin-token-file',
      join(local.dir, 'admin.token'),
      '--token-file',
      join(local.dir, 'client.token'),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const close = (): void => void child.kill('SIGTERM');
  process.once('exit', close);
  const url = await new Promise<string | null>((resolve) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /visualizer: (http:\/\/\S+\/)/.exec(out);
      if (m !== null) resolve(m[1]!);
    });
    child.once('exit', () => resolve(null));
  });
  if (url === null) {
    process.stderr.write('the visualizer did not start; the page goes on without its link\n');
    return null;
  }
  return { url, close };
}

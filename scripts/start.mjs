// `npm start`: a local cluster (`creek dev` with every example's ops) and the visualizer watching
// it live. creek dev's output passes through as it is; once every replica takes ops, the
// visualizer starts with the replicas' client URLs and the token files creek dev generated in its
// data directory, and prints its URL. Ctrl-C stops both; either one exiting stops the other.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const args = process.argv.slice(2);
const dev = spawn(
  process.execPath,
  ['packages/server/bin/creek.js', 'dev', '--app', 'packages/examples/src/apps.ts', ...args],
  { stdio: ['inherit', 'pipe', 'inherit'] },
);

let visualizer = null;
let stopping = false;
const urls = [];
let pending = '';
/** creek dev's data directory, where it keeps the tokens it generated (its first line says). */
let data = null;

dev.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  pending += chunk.toString();
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    const dir = /, data in (.+)$/.exec(line);
    if (dir !== null) data = dir[1];
    const replica = /replica \d+: (wss?:\/\/\S+\/client)/.exec(line);
    if (replica !== null) urls.push(replica[1]);
    // creek dev's last line once every replica takes ops.
    if (line.startsWith('Press Ctrl-C') && visualizer === null && urls.length > 0 && data !== null)
      watch();
  }
});

function watch() {
  visualizer = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--conditions=creek-source',
      'packages/visualizer/src/cli.ts',
      '--urls',
      urls.join(','),
      '--admin-token-file',
      join(data, 'admin.token'),
      '--token-file',
      join(data, 'client.token'),
    ],
    { stdio: 'inherit' },
  );
  visualizer.on('exit', (code) => {
    if (stopping) return;
    console.error(`npm start: the visualizer exited (${code}); the cluster goes on`);
  });
}

function stop(signal) {
  if (stopping) return;
  stopping = true;
  visualizer?.kill(signal);
  dev.kill(signal);
}

process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
dev.on('exit', (code, signal) => {
  stopping = true;
  visualizer?.kill('SIGTERM');
  process.exit(code ?? (signal === null ? 1 : 0));
});

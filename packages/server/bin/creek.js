#!/usr/bin/env node
// The `creek` command: the CLI built into dist/, run by plain Node (no TypeScript loader).
try {
  await import('../dist/node/cli.js');
} catch (err) {
  const missing =
    err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('/dist/node/cli.js');
  if (!missing) throw err;
  console.error(
    'creek: the server is not built (dist/node/cli.js is missing). In a checkout of the Creek ' +
      'repository, run `npm run build` (npm ci does it too).',
  );
  process.exit(1);
}

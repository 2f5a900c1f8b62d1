#!/usr/bin/env node
// The `creek` command: runs the TypeScript CLI through tsx (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../src/node/cli.ts');

import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { build } from 'esbuild';
import { expect } from 'vitest';

/**
 * The simulator as the visualizer loads it: bundled for a browser (an IIFE exposing `CreekSim`),
 * checked to import nothing of Node's, and run in a context holding only what a page has. Returns
 * that context, for a test to call `CreekSim` in.
 */
export async function simInAPage(): Promise<vm.Context> {
  const entry = fileURLToPath(new URL('../../src/sim/index.ts', import.meta.url));
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'CreekSim',
    conditions: ['creek-source'],
    write: false,
    logLevel: 'silent',
  });
  expect(out.errors).toEqual([]);
  const code = out.outputFiles[0]!.text;
  expect(code).not.toMatch(/\brequire\(|from "node:/);
  // What a page has, and nothing of Node's (no process, Buffer or require).
  const page = vm.createContext({
    console,
    TextEncoder,
    TextDecoder,
    crypto: globalThis.crypto,
    // window.btoa and atob: simulated users' tokens are base64url, as real ones.
    btoa,
    atob,
  });
  vm.runInContext(code, page);
  return page;
}

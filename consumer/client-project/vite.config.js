import { defineConfig } from 'vite';

// The page lives in web/; the build goes to web-dist/, served by the consumer test.
export default defineConfig({
  root: 'web',
  build: { outDir: '../web-dist', emptyOutDir: true, target: 'es2022' },
  logLevel: 'warn',
});

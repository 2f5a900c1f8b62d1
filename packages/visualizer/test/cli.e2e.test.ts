import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const CLI = ['--import', 'tsx', '--conditions=creek-source', 'packages/visualizer/src/cli.ts'];

function run(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...CLI, ...args],
      { cwd: root, timeout: 30_000 },
      (err, _o, stderr) =>
        resolve({ code: err === null ? 0 : Number((err as { code?: number }).code), stderr }),
    );
  });
}

describe('npm run visualizer', () => {
  it.each([
    [['--port', 'eighty'], /--port must be a port number from 0 to 65535, not "eighty"/],
    [['--port', '70000'], /--port must be a port number/],
    [['--prot', '7300'], /unknown option --prot/],
    [['--host'], /--host needs a value/],
    [['--urls', 'ws://127.0.0.1:7100/client'], /--urls needs --admin-token-file/],
    [
      ['--urls', 'http://127.0.0.1:7100', '--admin-token-file', 'x'],
      /--urls takes the replicas' client URLs, like ws:\/\/127.0.0.1:7100\/client, not "http:\/\/127.0.0.1:7100"/,
    ],
    [
      ['--urls', 'ws://127.0.0.1:7100/client', '--admin-token-file', '/nonexistent/admin.token'],
      /--admin-token-file \/nonexistent\/admin.token: ENOENT/,
    ],
    [['--token-file', 'client.token'], /go with --urls/],
    [['--dev', '--urls', 'ws://127.0.0.1:7100/client'], /--dev runs its own cluster/],
    [['--app', 'app.js'], /--app, --replicas, --data, --dev-identity and --profile go with --dev/],
    [['--dev-identity', 'on'], /--dev-identity and --profile go with --dev/],
    [['--profile', 'us-eu'], /--dev-identity and --profile go with --dev/],
    [['--dev', '--profile', 'mars'], /--profile must be one of lan, us-eu, global, not "mars"/],
    [['--dev', '--profile', 'US-EU'], /--profile must be one of lan, us-eu, global, not "US-EU"/],
    [['--dev', '--profile'], /--profile needs a value/],
    [['--dev', '--profile', ''], /--profile needs a value/],
    [['--dev', '--dev-identity', 'yes'], /--dev-identity must be on or off, not "yes"/],
    [['--dev', '--replicas', '0'], /--replicas must be a whole number from 1 to 15, not "0"/],
  ])('%j exits 2 saying what is wrong', async (args, message) => {
    const r = await run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/usage: npm run visualizer/);
  });

  it('serves the page at the URL it prints; only GET, only its two paths', async () => {
    const child = spawn(process.execPath, [...CLI, '--port', '0'], { cwd: root });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /visualizer: (http:\/\/\S+\/)/.exec(out);
          if (m !== null) resolve(m[1]!);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
      expect(await page.text()).toMatch(/<script type="module" src="\/app.js">/);
      expect((await fetch(`${url}app.js`)).status).toBe(200);
      expect((await fetch(`${url}secrets`)).status).toBe(404);
      // The dev sign-in is served only with --dev and its dev identity provider.
      expect((await fetch(`${url}dev/users`)).status).toBe(404);
      expect((await fetch(`${url}dev/sign-in?user=alice`)).status).toBe(404);
      expect((await fetch(url, { method: 'POST', body: 'x' })).status).toBe(405);
    } finally {
      child.kill('SIGTERM');
    }
  });
});

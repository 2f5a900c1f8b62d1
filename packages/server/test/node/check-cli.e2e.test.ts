import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `creek check` as a user runs it: a real process, what it prints and its exit status. It must
 * name each nondeterministic op with the arguments that show it, pass every example app, and say
 * what is wrong with a bad call.
 */
const BIN = fileURLToPath(new URL('../../bin/creek.js', import.meta.url));
const NOTES = fileURLToPath(new URL('./fixtures/check/notes-app.mjs', import.meta.url));
const EXAMPLES = fileURLToPath(new URL('../../../examples/src/', import.meta.url));
const SERVER = pathToFileURL(fileURLToPath(new URL('../../dist/index.js', import.meta.url))).href;
/** The apps below live in a temporary folder, with no node_modules: they import Zod by its path. */
const ZOD = pathToFileURL(createRequire(import.meta.url).resolve('zod')).href;

/** The environment without any CREEK_* setting the test runner may have. */
const ENV = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith('CREEK_')),
);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'creek-check-'));
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }');
  writeFileSync(join(dir, 'not-an-app.js'), 'export const answer = 42;\n');
  writeFileSync(join(dir, 'other-default.js'), 'export default { answer: 42 };\n');
  writeFileSync(join(dir, 'throws.js'), "throw new Error('the app cannot start here');\n");
  writeFileSync(
    join(dir, 'async.js'),
    `import { defineApp } from ${JSON.stringify(SERVER)};\nimport { z } from ${JSON.stringify(ZOD)};\n` +
      'export default defineApp({ slow: { args: z.object({}), run: async () => 1 } });\n',
  );
  writeFileSync(
    join(dir, 'bad-invariant.js'),
    `import { defineApp } from ${JSON.stringify(SERVER)};\n` +
      "export default defineApp({}, { invariants: { positive: 'n >= 0' } });\n",
  );
  writeFileSync(
    join(dir, 'bad-level.js'),
    `import { defineApp } from ${JSON.stringify(SERVER)};\nimport { z } from ${JSON.stringify(ZOD)};\n` +
      "export default defineApp({ x: { args: z.object({}), level: 'eventual', run: () => 1 } });\n",
  );
  writeFileSync(
    join(dir, 'bad-generator.js'),
    `import { defineApp } from ${JSON.stringify(SERVER)};\nimport { z } from ${JSON.stringify(ZOD)};\n` +
      'export default defineApp({ add: { args: z.object({ n: z.number().int().min(1) }), ' +
      'generate: (fc) => fc.record({ n: fc.constant(0) }), run: () => 1 } });\n',
  );
  writeFileSync(
    join(dir, 'string-generator.js'),
    `import { defineApp } from ${JSON.stringify(SERVER)};\nimport { z } from ${JSON.stringify(ZOD)};\n` +
      "export default defineApp({ add: { args: z.object({}), generate: 'fc.record({})', run: () => 1 } });\n",
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs creek to its end; the timeout only guards a command that would not exit (a bug). */
function creek(args: readonly string[], timeout = 60_000) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: dir,
    env: ENV,
    encoding: 'utf8',
    timeout,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('creek check', () => {
  it('names each nondeterministic op with the arguments that show it, and exits 1', () => {
    const r = creek(['check', '--app', NOTES, '--runs', '30', '--seed', '7']);
    expect(r.stderr).toBe('');
    const out = r.stdout;
    expect(out).toContain(`creek check: 5 ops of ${NOTES}, 30 generated states`);
    // The deterministic op passes.
    expect(out).toMatch(/^ {2}ok {8}note\.put \(30 runs, \d+ succeeded, [\d.]+ s\)$/m);
    // A clock the guard refuses: named, with the guard's message.
    expect(out).toContain('  FAILED    note.stamp: reaches for a source replicas refuse');
    expect(out).toContain(
      'refused by the execution guard: new Date() without arguments is not allowed inside an op',
    );
    // A clock captured before the op ran, a module-level counter, a Set filled in arrival order:
    // past the guard, but the runs differ.
    for (const op of ['note.stampHidden', 'note.number', 'note.ids'])
      expect(out).toContain(
        `  FAILED    ${op}: results differ between runs on the same state and arguments`,
      );
    // Each finding shows its arguments and the differing runs.
    const hidden = out.slice(out.indexOf('FAILED    note.stampHidden'));
    expect(hidden).toMatch(/^ {6}args: {3}\{"id":"[a-z]+","text":".*"\}$/m);
    // Runs with equal results share a line; which ones do depends on when each read the clock.
    expect(hidden).toMatch(/^ {6}A1\b.* ok "[a-z]+"; writes \[\["note\/[a-z]+",\{"text":/m);
    expect(hidden).toMatch(/^ {6}(A1 B1 )?A2\b.* ok /m);
    expect(out).toContain(
      'creek check: 4 of 5 ops are nondeterministic (note.ids, note.number, note.stamp, note.stampHidden)',
    );
    expect(out).toContain('creek check: repeat this check with --seed 7');
    expect(r.status).toBe(1);
  });

  it.each(['bank', 'ticketing', 'ads', 'tpcc'])('passes the %s example and exits 0', (example) => {
    const app = join(EXAMPLES, example, 'app.ts');
    const r = creek(['check', '--app', app, '--runs', '20'], 120_000);
    expect(r.stderr).toBe('');
    expect(r.stdout).not.toMatch(/FAILED|UNCHECKED/);
    expect(r.stdout).toContain('creek check: every op is deterministic in 20 runs each');
    expect(r.status).toBe(0);
  });

  it('says the bank may deposit weak and must withdraw strong, showing two withdrawals overdrawing', () => {
    const bank = join(EXAMPLES, 'bank', 'app.ts');
    const r = creek(
      ['check', '--app', bank, '--runs', '5', '--pair-runs', '200', '--seed', '7'],
      120_000,
    );
    expect(r.stderr).toBe('');
    const out = r.stdout;
    expect(out).toContain('  invariants: no balance is negative');
    expect(out).toMatch(/^ {2}weak {6}bank\.deposit \(declared weak\): /m);
    expect(out).toMatch(/^ {2}weak {6}bank\.interest \(declared weak\): /m);
    expect(out).toContain(
      "  strong    bank.withdraw (declared strong): its effect, decided on a state that lacks a concurrent bank.withdraw, breaks 'no balance is negative'",
    );
    const shown = out.slice(out.indexOf('strong    bank.withdraw'));
    expect(shown).toMatch(/one replica runs bank\.withdraw .* as alice: answered \{"ok":true/);
    expect(shown).toMatch(/another runs {5}bank\.withdraw .* as alice: answered \{"ok":true/);
    expect(shown).toMatch(/^ {6}bank\/.+\/balance = -\d+$/m);
    expect(out).toContain(
      'creek check: may be weak: bank.balance, bank.deposit, bank.interest; must be strong: bank.open, bank.withdraw',
    );
    expect(r.status).toBe(0);
  });

  it('fails a bank whose withdraw is declared weak, and names it', () => {
    // The bank with one change: withdraw declared weak, as a developer might mark it. TypeScript,
    // loaded as the examples are, since it imports the bank's own module.
    writeFileSync(
      join(dir, 'weak-withdraw.ts'),
      `import bank from ${JSON.stringify(pathToFileURL(join(EXAMPLES, 'bank', 'app.ts')).href)};\n` +
        `import { defineApp } from ${JSON.stringify(SERVER)};\n` +
        'const ops = { ...bank.definitions };\n' +
        "ops['bank.withdraw'] = { ...ops['bank.withdraw'], level: 'weak' };\n" +
        'export default defineApp(ops, { invariants: bank.invariants });\n',
    );
    const r = creek(['check', '--app', 'weak-withdraw.ts', '--runs', '5', '--seed', '7'], 120_000);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('creek check: every op is deterministic in 5 runs each');
    expect(r.stdout).toContain(
      "  MISMATCH  bank.withdraw (declared weak): its effect, decided on a state that lacks a concurrent bank.withdraw, breaks 'no balance is negative'",
    );
    expect(r.stdout).toContain(
      'creek check: bank.withdraw is declared weak and must be strong: a weak call can break what is shown above',
    );
    expect(r.stdout).toContain('creek check: repeat this check with --seed 7');
    expect(r.status).toBe(1);
  });

  it('reports an op it cannot generate arguments for as not checked, and exits 1', () => {
    writeFileSync(
      join(dir, 'dates.js'),
      `import { defineApp, op } from ${JSON.stringify(SERVER)};\nimport { z } from ${JSON.stringify(ZOD)};\n` +
        `export default defineApp({ 'at.day': op({ args: z.object({ at: z.date() }), run: () => null }) });\n`,
    );
    const r = creek(['check', '--app', 'dates.js', '--runs', '5']);
    expect(r.stdout).toContain(
      '  UNCHECKED at.day: args.at: creek check cannot generate a z.date() value',
    );
    expect(r.stdout).toContain('creek check: 1 of 1 ops could not be checked (at.day)');
    expect(r.status).toBe(1);
  });
});

describe('creek check, called wrong', () => {
  it.each([
    [['check'], '--app is required', 2],
    [['check', '--ap', 'x.js'], 'unknown flag --ap: did you mean --app?', 2],
    [['check', '--app', 'x.js', '--rns', '5'], 'unknown flag --rns: did you mean --runs?', 2],
    [['check', '--app', 'x.js', '--runs', '0'], '--runs 0 must be a whole number from 1 to', 2],
    [['check', '--app', 'x.js', '--seed', 'abc'], '--seed abc must be a whole number', 2],
    [['check', '--app', 'x.js', '--pair-runs', '0'], '--pair-runs 0 must be a whole number', 2],
    [['check', '--app', 'x.js', '--pair-runs', '1e3'], '--pair-runs 1e3 must be a whole number', 2],
    [['check', '--app', 'bad-invariant.js'], "invariant 'positive': must be a function", 1],
    [['check', '--app', 'bad-level.js'], "operation 'x': level must be 'weak' or 'strong'", 1],
    [['check', 'app.js'], "unexpected argument 'app.js'", 2],
    [['check', '--app', 'nope.js'], '--app nope.js: no such file', 1],
    [['check', '--app', '.'], 'is not a file', 1],
    [['check', '--app', 'not-an-app.js'], 'has no default export', 1],
    [['check', '--app', 'other-default.js'], 'must be defineApp({...})', 1],
    [['check', '--app', 'throws.js'], 'the app cannot start here', 1],
    [['check', '--app', 'async.js'], "operation 'slow': run is an async function", 1],
    [
      ['check', '--app', 'bad-generator.js'],
      `operation 'add': generate yields arguments its schema refuses: {"n":0} (invalid arguments for 'add': n: `,
      1,
    ],
    [
      ['check', '--app', 'string-generator.js'],
      "operation 'add': generate must be a function (fc) => an arbitrary of its arguments",
      1,
    ],
  ])('creek %j says %j and exits %i', (args, message, status) => {
    const r = creek(args);
    expect(r.stderr).toContain(message);
    expect(r.stderr).toMatch(/^creek check: /);
    expect(r.stdout).toBe('');
    expect(r.status).toBe(status);
  });

  it('--help says what it does and lists its settings', () => {
    const r = creek(['check', '--help']);
    expect(r.stdout).toContain('usage: creek check');
    for (const flag of ['--app FILE', '--runs N', '--pair-runs N', '--seed N'])
      expect(r.stdout).toContain(flag);
    expect(r.status).toBe(0);
    expect(creek(['--help']).stdout).toContain('creek check');
  });
});

import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { backup, BACKUP_USAGE } from './backup-command.js';
import { check, CHECK_USAGE } from './check-command.js';
import { closestName } from './closest-name.js';
import { dev, DEV_USAGE } from './dev-command.js';
import { member, MEMBER_USAGE } from './member-command.js';
import { recover, RECOVER_USAGE } from './recover-command.js';
import { restore, RESTORE_USAGE } from './restore-command.js';
import { SettingsError } from './settings.js';
import { start, START_USAGE } from './start-command.js';

const COMMANDS = {
  start: { run: start, usage: START_USAGE },
  dev: { run: dev, usage: DEV_USAGE },
  member: { run: member, usage: MEMBER_USAGE },
  backup: { run: backup, usage: BACKUP_USAGE },
  restore: { run: restore, usage: RESTORE_USAGE },
  recover: { run: recover, usage: RECOVER_USAGE },
  check: { run: check, usage: CHECK_USAGE },
} as const;
type Command = keyof typeof COMMANDS;

const USAGE = `usage: creek <command> [--setting value ...]

  creek dev     a local cluster of real replica processes on this machine
                (creek dev token --user NAME: a dev user's token for it)
  creek start   one replica of a cluster whose replicas run on their own hosts
  creek member  list, add, remove or replace the replicas of a running cluster
  creek backup  an online backup of a running cluster's state to a file
  creek restore the data directory of a new cluster's replica from a backup
  creek recover a new cluster from the survivor of one that lost a majority
  creek check   run every op of an app twice in two instances: find nondeterministic ops
  creek help [command], creek <command> --help    what a command does and its settings
  creek --version                                  the version of creek
`;

/** Why `creek` exits: 2 a mistake in how it was called, 1 anything else that failed. */
const EXIT_USAGE = 2;
const EXIT_FAILED = 1;

function version(): string {
  const pkg = z
    .object({ version: z.string() })
    .parse(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')));
  return pkg.version;
}

function isCommand(name: string): name is Command {
  return Object.hasOwn(COMMANDS, name);
}

/** Names the nearest command or flag to a mistyped one, or lists them. */
function unknown(what: string, given: string, valid: readonly string[]): SettingsError {
  const near = closestName(given, valid);
  return new SettingsError(
    `unknown ${what} '${given}'${near === undefined ? `; ${what}s: ${valid.join(', ')}` : `: did you mean '${near}'?`} (creek --help lists them)`,
  );
}

async function main(argv: readonly string[]): Promise<void> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    process.stderr.write(USAGE);
    process.exit(EXIT_USAGE);
  }
  if (first === '--help' || first === '-h') return void process.stdout.write(USAGE);
  if (first === '--version' || first === '-v') return void console.log(version());
  if (first.startsWith('-')) throw unknown('flag', first, ['--help', '--version']);
  if (first === 'help') {
    const [topic, ...extra] = rest;
    if (extra.length > 0) throw new SettingsError(`help takes one command at most`);
    if (topic === undefined) return void process.stdout.write(USAGE);
    if (!isCommand(topic)) throw unknown('command', topic, Object.keys(COMMANDS));
    return void process.stdout.write(COMMANDS[topic].usage);
  }
  if (!isCommand(first)) throw unknown('command', first, [...Object.keys(COMMANDS), 'help']);
  await COMMANDS[first].run(rest, process.env);
}

const argv = process.argv.slice(2);
main(argv).catch((err: unknown) => {
  const command =
    argv[0] === 'dev' && argv[1] === 'token'
      ? 'creek dev token'
      : argv[0] !== undefined && isCommand(argv[0])
        ? `creek ${argv[0]}`
        : 'creek';
  const message = err instanceof Error ? err.message : String(err);
  for (const line of message.split('\n')) console.error(`${command}: ${line}`);
  process.exit(err instanceof SettingsError ? EXIT_USAGE : EXIT_FAILED);
});

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { z } from 'zod';
import { closestName } from './closest-name.js';

/**
 * One setting of a command. It can be given three ways, validated by the same schema: the flag
 * `--name`, the environment variable `CREEK_NAME` (see `envName`) and the key `"name"` of the JSON
 * file named by `--config`. A flag wins over the environment, which wins over the file, which wins
 * over the schema's default.
 */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  /** What the value is, for the usage: FILE, N, host:port. */
  readonly value?: string;
  /** A file or directory: a relative one in a config file is relative to that file's directory. */
  readonly path?: boolean;
  /** One line for the usage; also completes the message when a required setting is missing. */
  readonly help: string;
}
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** A mistake in how the command was called: `creek` exits with status 2 and the message. */
export class SettingsError extends Error {}

/** The environment variable of a setting: `token-file` → `CREEK_TOKEN_FILE`. */
export function envName(setting: string): string {
  return `CREEK_${setting.toUpperCase().replaceAll('-', '_')}`;
}

/** Where a setting's value came from, to name it in an error. */
type Source =
  | { readonly kind: 'flag' }
  | { readonly kind: 'env' }
  | { readonly kind: 'file'; readonly file: string };

/** Every command also takes these two. */
const META_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  config: { type: 'string' },
} as const;

export type Settings<T> = { readonly help: true } | { readonly help: false; readonly settings: T };

/**
 * The settings of `creek <command>` from its arguments, `env` and the `--config` file, validated by
 * `schema`. Throws a SettingsError naming every bad setting (as the flag, variable or file key it
 * came from) and saying what is expected. `{ help: true }` when `--help` or `-h` is among the
 * arguments, whatever else is.
 */
export function readSettings<S extends z.ZodType>(
  command: string,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  options: OptionSpecs,
  schema: S,
): Settings<z.output<S>> {
  const flags = readFlags(command, argv, options);
  if (flags === 'help') return { help: true };
  const values: Record<string, unknown> = {};
  const sources: Record<string, Source> = {};
  const set = (name: string, value: unknown, source: Source): void => {
    values[name] = value;
    sources[name] = source;
  };
  const configFile = typeof flags.config === 'string' ? flags.config : env.CREEK_CONFIG;
  if (configFile !== undefined)
    for (const [name, value] of Object.entries(readConfigFile(configFile, options)))
      set(name, value, { kind: 'file', file: configFile });
  for (const name of Object.keys(options)) {
    const fromEnv = env[envName(name)];
    if (fromEnv !== undefined) set(name, fromEnv, { kind: 'env' });
    if (flags[name] !== undefined) set(name, flags[name], { kind: 'flag' });
  }
  const parsed = schema.safeParse(values);
  if (parsed.success) return { help: false, settings: parsed.data };
  throw new SettingsError(
    parsed.error.issues
      .map((issue) => describeIssue(issue, options, values, sources))
      .filter((line, i, all) => all.indexOf(line) === i)
      .join('\n'),
  );
}

/** `creek <command> --help`: what it does, its settings, and where else settings come from. */
export function commandUsage(command: string, about: string, options: OptionSpecs): string {
  return `usage: creek ${command} [--setting value ...]

${about}

${formatOptions(options)}

Each setting can also be given as the environment variable CREEK_<SETTING> (--token-file:
CREEK_TOKEN_FILE; a flag: true or false) or as a key of the JSON file named by --config (or
CREEK_CONFIG), e.g. {"token-file": "client.token", "fsync": true}; relative file names in it are
relative to the file. A flag wins over the environment, the environment over the file, the file
over the default.
`;
}

function formatOptions(options: OptionSpecs): string {
  const rows: [string, string][] = Object.entries(options).map(([name, o]) => [
    `--${name}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}`,
    o.help,
  ]);
  rows.push(['--config FILE', 'read settings from a JSON file: {"setting-name": value, ...}']);
  rows.push(['--help, -h', 'this text']);
  const width = Math.max(...rows.map(([flag]) => flag.length)) + 2;
  return rows.map(([flag, help]) => `  ${flag.padEnd(width)}${help}`).join('\n');
}

/**
 * The flags, by util.parseArgs in strict mode. A first, lenient pass over its tokens explains a
 * mistake better than strict mode's own errors can: it suggests the nearest flag for an unknown one.
 */
function readFlags(
  command: string,
  argv: readonly string[],
  options: OptionSpecs,
): Record<string, string | boolean | undefined> | 'help' {
  const config: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    ...Object.fromEntries(Object.entries(options).map(([name, o]) => [name, { type: o.type }])),
    ...META_OPTIONS,
  };
  const args = [...argv];
  const { tokens } = parseArgs({ args, options: config, strict: false, tokens: true });
  if (tokens.some((t) => t.kind === 'option' && t.name === 'help')) return 'help';
  const seeHelp = `(creek ${command} --help lists every setting)`;
  for (const t of tokens) {
    if (t.kind === 'positional' || t.kind === 'option-terminator')
      throw new SettingsError(
        `unexpected argument '${t.kind === 'positional' ? t.value : '--'}': settings are given as --name value ${seeHelp}`,
      );
    const spec = config[t.name];
    if (spec === undefined) {
      const near = t.rawName.startsWith('--')
        ? closestName(t.name, Object.keys(config))
        : undefined;
      throw new SettingsError(
        `unknown flag ${t.rawName}${near === undefined ? '' : `: did you mean --${near}?`} ${seeHelp}`,
      );
    }
    if (spec.type === 'boolean' && t.value !== undefined)
      throw new SettingsError(
        `${t.rawName} takes no value (give it alone; ${envName(t.name)}=false or "${t.name}": false in a --config file turn it off)`,
      );
    // Lenient mode takes the next argument as the value even if it is a flag; strict mode refuses.
    if (
      spec.type === 'string' &&
      (t.value === undefined || (!t.inlineValue && t.value.startsWith('-')))
    )
      throw new SettingsError(
        `${t.rawName} needs a value: ${t.rawName} ${options[t.name]?.value ?? 'VALUE'} (a value starting with '-' is written ${t.rawName}=VALUE)`,
      );
  }
  return parseArgs({ args, options: config, strict: true, allowPositionals: false }).values;
}

/** The settings in a `--config` file: a JSON object whose keys are setting names. */
function readConfigFile(file: string, options: OptionSpecs): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new SettingsError(
      `--config ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)}); name a readable JSON file`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SettingsError(`--config ${file} is not JSON: ${(err as Error).message}`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new SettingsError(
      `--config ${file} must hold one JSON object of settings, e.g. {"data": "/var/lib/creek"}`,
    );
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(json)) {
    const spec = options[name];
    if (spec === undefined) {
      const near = closestName(name, Object.keys(options));
      throw new SettingsError(
        `--config ${file}: unknown key "${name}"${near === undefined ? '' : `: did you mean "${near}"?`} (the keys are the names of the flags, without --)`,
      );
    }
    // A URL where a file may be given (--auth-jwks) is no file name to resolve.
    out[name] =
      spec.path === true && typeof value === 'string' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(value)
        ? resolve(dirname(file), value)
        : value;
  }
  return out;
}

function describeIssue(
  issue: z.core.$ZodIssue,
  options: OptionSpecs,
  values: Record<string, unknown>,
  sources: Record<string, Source>,
): string {
  const name = issue.path[0];
  if (typeof name !== 'string' || options[name] === undefined) return issue.message;
  const source = sources[name];
  if (source === undefined)
    // A rule between settings may ask for one that was not given: its message says why.
    return issue.code === 'custom'
      ? `--${name} ${issue.message} (or set ${envName(name)}, or "${name}" in a --config file)`
      : `--${name} is required: ${options[name].help} (or set ${envName(name)}, or "${name}" in a --config file)`;
  const value = values[name];
  const label =
    source.kind === 'flag'
      ? `--${name}${typeof value === 'string' ? ` ${shellWord(value)}` : ''}`
      : source.kind === 'env'
        ? `${envName(name)}=${shellWord(String(value))}`
        : `"${name}": ${JSON.stringify(value)} in ${source.file}`;
  return `${label} ${issue.message}`;
}

function shellWord(s: string): string {
  return /^[\w./:=,@+-]+$/.test(s) ? s : JSON.stringify(s);
}

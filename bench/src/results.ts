/**
 * A benchmark's results, kept as a dated record instead of pasted into prose: every line the
 * benchmark reports is printed to stdout as before and also kept, and `save()` writes them to
 * `bench/results/YYYY-MM-DD-<name>.md` (the UTC date of the run; `-2`, `-3`, … when that day
 * already has one) with what the figures depend on: the machine (cores, CPU model, memory, OS),
 * the Node version and the command that made them. Absolute figures on a shared machine drift
 * from day to day, so a figure without its date and machine says little.
 *
 * `CREEK_BENCH_RESULTS=DIR` writes the records into DIR instead; `CREEK_BENCH_RESULTS=off` writes
 * none (stdout is the same either way).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where records go unless CREEK_BENCH_RESULTS says otherwise: bench/results/. */
export const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

/** `markdown`: the lines are markdown already (tables); `text`: kept verbatim in a text fence. */
export type ResultsFormat = 'markdown' | 'text';

export interface Machine {
  readonly cores: number;
  readonly cpu: string;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
  /** The 1, 5 and 15 minute load averages when the record was made. */
  readonly load: readonly number[];
}

/** This machine, as a record states it. */
export function thisMachine(): Machine {
  const list = cpus();
  return {
    cores: list.length,
    cpu: list[0]?.model.trim() ?? 'unknown CPU',
    memoryGiB: totalmem() / 2 ** 30,
    os: `${platform()} ${release()}`,
    node: process.version,
    load: loadavg(),
  };
}

/** The command that reproduces a run: `npm run bench:<name>`, with its arguments after `--`. */
export function commandLine(name: string, args: readonly string[]): string {
  const quoted = args.map((a) =>
    /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`,
  );
  return `npm run bench:${name}${quoted.length === 0 ? '' : ` -- ${quoted.join(' ')}`}`;
}

/** The record's file name: the date and the benchmark, numbered when the day already has one. */
export function recordName(date: string, name: string, taken: (file: string) => boolean): string {
  for (let n = 1; ; n++) {
    const file = `${date}-${name}${n === 1 ? '' : `-${n}`}.md`;
    if (!taken(file)) return file;
  }
}

/** The record's text: a heading, the machine and the command, then the benchmark's own lines. */
export function renderRecord(r: {
  readonly name: string;
  readonly date: string;
  readonly machine: Machine;
  readonly command: string;
  readonly format: ResultsFormat;
  readonly lines: readonly string[];
}): string {
  const m = r.machine;
  const body = r.lines.join('\n').replace(/^\n+|\n+$/g, '');
  return [
    `# bench:${r.name}, ${r.date}`,
    '',
    `Written by \`npm run bench:${r.name}\` (bench/src/results.ts): a record of one run on one machine.`,
    '',
    `- machine: ${m.cores} cores, ${m.cpu}, ${m.memoryGiB.toFixed(1)} GiB memory, ${m.os}`,
    `- Node ${m.node}; load average at the end ${m.load.map((x) => x.toFixed(2)).join(' ')}`,
    `- command: \`${r.command}\``,
    '',
    r.format === 'text' ? `\`\`\`text\n${body}\n\`\`\`` : body,
    '',
  ].join('\n');
}

export interface Results {
  /** Prints `line` on stdout (as console.log does) and keeps it for the record. */
  print(line?: string): void;
  /** Writes the record; its path, or null when CREEK_BENCH_RESULTS=off. Says where on stderr. */
  save(): string | null;
}

/**
 * The results of `npm run bench:<name>` (run with `args`, by default this process's), recorded as
 * `<date>-<record>.md`: `record` is the benchmark's name unless one benchmark keeps records of
 * several kinds (bench:geo's, one per network profile).
 */
export function recordResults(
  name: string,
  format: ResultsFormat,
  args: readonly string[] = process.argv.slice(2),
  record: string = name,
): Results {
  const lines: string[] = [];
  return {
    print(line = '') {
      console.log(line);
      lines.push(line);
    },
    save() {
      const setting = process.env.CREEK_BENCH_RESULTS?.trim();
      if (setting === 'off') return null;
      const dir = setting === undefined || setting === '' ? RESULTS_DIR : resolve(setting);
      mkdirSync(dir, { recursive: true });
      const date = new Date().toISOString().slice(0, 10);
      const path = join(
        dir,
        recordName(date, record, (f) => existsSync(join(dir, f))),
      );
      const command = commandLine(name, args);
      writeFileSync(
        path,
        renderRecord({ name, date, machine: thisMachine(), command, format, lines }),
      );
      const shown = relative(process.cwd(), path);
      process.stderr.write(
        `bench:${name}: results written to ${shown.startsWith('..') ? path : shown}\n`,
      );
      return path;
    },
  };
}

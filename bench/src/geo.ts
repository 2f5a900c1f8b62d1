/**
 * Creek across regions, beside etcd and a fair SMR, on emulated WAN links (issue 45).
 *
 *   npm run bench:geo [-- --profile lan|us-eu|global --ops 60 --ads 20 --seconds 5 --outstanding 64,256]
 *
 * Starts a Toxiproxy server (building it with `go install` when missing; see geo/toxiproxy.ts)
 * and, one system at a time so that no idle cluster shares the cores with the measured one:
 *
 *  - Creek: 3 replicas (5 for `global`), one per region, every peer link (i to j) through its own
 *    proxy with the profile's one-way delay and jitter (geo/creek-replicas.ts);
 *  - SMR: the same with `--speculation off`, where every op is ordered on arrival and answered once
 *    executed in the committed order;
 *  - etcd 3.4: one member per region, a proxy per directed link too when run as root (each member
 *    in a mount namespace whose /etc/hosts points the others' names at its own proxies), else one
 *    proxy per member fitted to the round trips (geo/etcd-members.ts); etcd's own tuning for the
 *    largest round trip.
 *
 * Every system's leader is placed at replica 0 (us-east) before it is measured: Creek's and SMR's
 * by cutting the elected leader off until replica 0 wins (they have no leader transfer yet),
 * etcd's with its move-leader.
 *
 * A client next to each replica (in its region, no proxy: a local round trip is loopback here)
 * runs `--ops` sequential ops per cell; the regions' clients run at the same time. Cells: weak put
 * and get (Creek and SMR), strong put to its tentative and its stable answer, strong get; etcd put
 * and linearizable get. Then strong-put throughput with each `--outstanding` count spread over
 * the regions' clients, and (Creek) the ad-serving example's fetch, speculating on the
 * preliminary profile and waiting for the stable one (geo/ads.ts). It prints each region's
 * nearest-majority round trip beside its strong put, and issue 45's goals with pass or not
 * reached. Results: bench/results/<date>-geo-<profile>.md and an .svg chart beside it.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { recordResults } from './results.js';
import { measureAds } from './geo/ads.js';
import { startGeoCreek, type GeoCreek } from './geo/creek-replicas.js';
import { etcdTimers, startGeoEtcd, type EtcdLinks } from './geo/etcd-members.js';
import { parseGeoFlags, replicasFor } from './geo/flags.js';
import { fitErrors, linkDelay } from './geo/links.js';
import { quantiles, sequential, throughput, type Quantiles } from './geo/measure.js';
import {
  adsTable,
  boundTable,
  goals,
  latencyChart,
  latencyTable,
  regionLabel,
  throughputTable,
  type GeoResults,
} from './geo/report.js';
import {
  creekClient,
  etcdClient,
  METRICS,
  type Metric,
  type RegionClient,
  type SystemName,
} from './geo/systems.js';
import { ensureToxiproxy, startToxiproxy, type Toxiproxy } from './geo/toxiproxy.js';

const log = (line: string): void => void process.stderr.write(`bench:geo: ${line}\n`);
const APP = fileURLToPath(new URL('../../packages/examples/src/ads/app.ts', import.meta.url));

const flags = parseGeoFlags(process.argv.slice(2), (message) => {
  console.error(`bench:geo: ${message}`);
  process.exit(2);
});
const profile = flags.profile;
const replicas = replicasFor(profile);
const out = recordResults('geo', 'markdown', process.argv.slice(2), `geo-${profile.name}`);

type Latency = Partial<Record<Metric, Quantiles[]>>;

/**
 * Where every system's leader is placed: replica (member) 0, in the first region (us-east). In
 * us-eu it is the region closest to the other two, so each region's strong put can meet its
 * nearest-majority bound; every system leads from the same place, so none is favoured.
 */
const LEADER = 0;

/** What the record should say beside the tables (a leader that moved during a run). */
const notes: string[] = [];
function note(line: string): void {
  log(line);
  notes.push(line);
}

/**
 * What this run started and has not stopped: stopped on SIGINT or SIGTERM too, so that a run
 * ended early leaves no proxy, replica or etcd member behind.
 */
const running = new Set<{ stop(): Promise<void> }>();
function tracked<T extends { stop(): Promise<void> }>(started: T): T {
  const stop = started.stop.bind(started);
  const entry = { stop };
  running.add(entry);
  return {
    ...started,
    stop: () => {
      running.delete(entry);
      return stop();
    },
  };
}
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    log(`${signal}: stopping what this run started`);
    void Promise.allSettled([...running].map((r) => r.stop())).then(() => process.exit(130));
  });

/** The sequential cells of every region's client, the regions at once; the p50/p99 per region. */
async function measureLatency(
  system: SystemName,
  clients: readonly RegionClient[],
): Promise<Latency> {
  const perRegion = await Promise.all(
    clients.map(async (c) => {
      const got: Partial<Record<Metric, Quantiles>> = {};
      for (const m of METRICS) {
        const op = c.cells[m];
        if (op === undefined || m === 'strong put tentative') continue;
        const s = await sequential(op, flags.ops);
        got[m] = quantiles(s.last);
        // One run of the strong put gives both its answers: the first and the last.
        if (m === 'strong put stable' && c.cells['strong put tentative'] !== undefined)
          got['strong put tentative'] = quantiles(s.first);
      }
      return got;
    }),
  );
  const lat: Latency = {};
  for (const m of METRICS) {
    if (perRegion.every((r) => r[m] === undefined)) continue;
    lat[m] = perRegion.map((r) => r[m]!);
  }
  const strong = lat['strong put stable']?.map((q) => q.p50.toFixed(1)).join(' / ') ?? '–';
  log(`${system}: strong put p50 by region ${strong} ms`);
  return lat;
}

async function measureThroughput(clients: readonly RegionClient[]): Promise<number[]> {
  const rates: number[] = [];
  for (const n of flags.outstanding)
    rates.push(
      await throughput(
        clients.map((c) => c.put),
        n,
        flags.seconds,
      ),
    );
  return rates;
}

async function creekRun(
  tp: Toxiproxy,
  speculative: boolean,
): Promise<{
  lat: Latency;
  rates: number[];
  leader: number;
  cluster: GeoCreek;
  clients: RegionClient[];
}> {
  const system: SystemName = speculative ? 'Creek' : 'SMR';
  log(
    `${system}: starting ${replicas} replicas (${speculative ? 'speculation on' : '--speculation off'})`,
  );
  const cluster = tracked(
    await startGeoCreek({
      name: speculative ? 'creek' : 'smr',
      replicas,
      profile,
      toxiproxy: tp,
      speculative,
      app: APP,
      flags: [
        '--reads',
        flags.reads,
        '--network',
        flags.network,
        '--preferred-leader',
        String(LEADER),
      ],
    }),
  );
  const clients: RegionClient[] = [];
  try {
    // The preferred leader takes over once it is up and caught up; placeLeader is the fallback.
    let elected = await cluster.waitForLeader(60_000);
    for (let waited = 0; elected !== LEADER && waited < 30_000; waited += 500) {
      await new Promise((r) => setTimeout(r, 500));
      elected = await cluster.waitForLeader(10_000);
    }
    if (elected !== LEADER) {
      log(`${system}: replica ${elected} still leads; moving the lead to replica ${LEADER}`);
      await cluster.placeLeader(LEADER, 60_000);
    }
    const leader = await cluster.waitForLeader(10_000);
    log(
      `${system}: leader replica ${leader} (${regionLabel(profile, leader)}); ${flags.ops} sequential ops per cell and region`,
    );
    for (let i = 0; i < replicas; i++)
      clients.push(await creekClient(cluster.urls[i]!, cluster.token, i, speculative));
    const lat = await measureLatency(system, clients);
    log(
      `${system}: throughput at ${flags.outstanding.join(', ')} outstanding, ${flags.seconds} s each`,
    );
    const rates = await measureThroughput(clients);
    log(`${system}: ${rates.map((r) => Math.round(r)).join(' / ')} strong puts/s`);
    const after = await cluster.waitForLeader(10_000);
    if (after !== leader)
      note(
        `${system}: the leader moved from ${leader} to ${after} during its latency and throughput cells`,
      );
    return { lat, rates, leader, cluster, clients };
  } catch (err) {
    for (const c of clients) c.close();
    await cluster.stop();
    throw err;
  }
}

async function etcdRun(
  tp: Toxiproxy,
  leader: number,
): Promise<{
  lat: Latency;
  rates: number[];
  leader: number;
  links: EtcdLinks;
  delays: readonly number[];
}> {
  const [heartbeat, election] = etcdTimers(profile, replicas);
  log(
    `etcd: starting ${replicas} members (heartbeat ${heartbeat} ms, election timeout ${election} ms)`,
  );
  const etcd = tracked(await startGeoEtcd(profile, replicas, tp));
  const clients: RegionClient[] = [];
  try {
    await etcd.moveLeader(leader, 30_000);
    log(`etcd: leader member ${leader} (${regionLabel(profile, leader)}); links ${etcd.links}`);
    for (let i = 0; i < replicas; i++) clients.push(await etcdClient(etcd.urls[i]!, i));
    const lat = await measureLatency('etcd', clients);
    log(`etcd: throughput at ${flags.outstanding.join(', ')} outstanding, ${flags.seconds} s each`);
    const rates = await measureThroughput(clients);
    log(`etcd: ${rates.map((r) => Math.round(r)).join(' / ')} puts/s`);
    return {
      lat,
      rates,
      leader: await etcd.leader(),
      links: etcd.links,
      delays: etcd.delays,
    };
  } finally {
    for (const c of clients) c.close();
    await etcd.stop();
  }
}

/** A link's end in the links table: `0 us-east`, or `lan 0` where every replica shares a region. */
const linkEnd = (i: number): string =>
  profile.regions.length === 1 ? regionLabel(profile, i) : `${i} ${regionLabel(profile, i)}`;

async function main(): Promise<void> {
  const tp = tracked(await startToxiproxy(ensureToxiproxy(log)));
  try {
    out.print(
      `profile ${profile.name}: ${profile.description}; ${replicas} replicas (Creek, SMR) and ${replicas} etcd members, a client next to each`,
    );
    out.print('');
    out.print(
      `Creek and SMR replicas: \`creek start --reads ${flags.reads} --network ${flags.network} --preferred-leader ${LEADER}\``,
    );
    out.print('');
    out.print(
      'Creek and SMR peer links (Toxiproxy latency toxic per directed link, whole ms ± jitter):',
    );
    out.print('');
    out.print('| link | one-way delay ± jitter |');
    out.print('| --- | --- |');
    for (let i = 0; i < replicas; i++)
      for (let j = i + 1; j < replicas; j++) {
        const d = linkDelay(profile, i, j);
        out.print(`| ${linkEnd(i)} ↔ ${linkEnd(j)} | ${d.latencyMs} ± ${d.jitterMs} ms |`);
      }
    const creek = await creekRun(tp, true);
    let ads: GeoResults['ads'] = null;
    try {
      if (flags.ads > 0) {
        const a = await measureAds(creek.cluster.urls, creek.cluster.token, flags.ads, log);
        ads = {
          strong: a.strong.map((x) => ({
            speculative: quantiles(x.speculative.last),
            strongOnly: quantiles(x.strongOnly.last),
          })),
          weak: a.weak.map((x) => ({
            speculative: quantiles(x.speculative.last),
            strongOnly: quantiles(x.strongOnly.last),
          })),
        };
      }
      const after = await creek.cluster.waitForLeader(10_000);
      if (after !== creek.leader)
        note(`Creek: the leader was ${after}, not ${creek.leader}, after the ad-serving cells`);
    } finally {
      for (const c of creek.clients) c.close();
      await creek.cluster.stop();
    }
    const smr = await creekRun(tp, false);
    for (const c of smr.clients) c.close();
    await smr.cluster.stop();
    const etcd = await etcdRun(tp, LEADER);
    const results: GeoResults = {
      profile,
      replicas,
      leaders: { Creek: creek.leader, SMR: smr.leader, etcd: etcd.leader },
      latency: { Creek: creek.lat, SMR: smr.lat, etcd: etcd.lat },
      throughput: flags.outstanding.map((n, k) => ({
        outstanding: n,
        ops: { Creek: creek.rates[k]!, SMR: smr.rates[k]!, etcd: etcd.rates[k]! },
      })),
      ads,
    };
    const leaders = (['Creek', 'SMR', 'etcd'] as const)
      .map((s) => `${s} ${results.leaders[s]} (${regionLabel(profile, results.leaders[s])})`)
      .join(', ');
    const fit = fitErrors(profile, etcd.delays);
    out.print('');
    out.print(
      etcd.links === 'per-pair'
        ? "etcd peer links: a proxy per directed link, as Creek's (each member resolves the others' advertised names to its own proxies, in a mount namespace of its own)"
        : `etcd peer links: one proxy per member delaying what it sends (no per-pair links without root and unshare); round trips it gives vs the profile's: ${fit.map((f) => `${f.i}↔${f.j} ${f.fitted.toFixed(0)}/${f.rtt}`).join(', ')} ms`,
    );
    out.print('');
    out.print(`leaders: ${leaders}`);
    for (const line of notes) out.print(`\n${line}`);
    out.print('');
    out.print(
      `latency, ms, ${flags.ops} sequential ops per cell and client region (regions at once):`,
    );
    out.print('');
    for (const line of latencyTable(results)) out.print(line);
    out.print('');
    out.print(
      "strong put stable p50 against the round trip to the region's nearest majority (any protocol that commits pays it):",
    );
    out.print('');
    for (const line of boundTable(results)) out.print(line);
    out.print('');
    out.print(
      `throughput, ${flags.seconds} s per cell, the outstanding ops spread over the regions' clients:`,
    );
    out.print('');
    for (const line of throughputTable(results)) out.print(line);
    if (ads !== null) {
      out.print('');
      out.print(
        `ad serving (packages/examples/src/ads), ${flags.ads} fetches per variant and region, ms; no concurrent re-targeting, so every speculation is confirmed:`,
      );
      out.print('');
      for (const line of adsTable(results)) out.print(line);
    }
    out.print('');
    out.print('issue 45 goals (set for the us-eu profile), from this run:');
    out.print('');
    for (const line of goals(results)) out.print(line);
    out.print('');
    out.print('chart: the .svg of the same name beside this file (p50 by client region).');
    const path = out.save();
    if (path !== null) {
      const svg = path.replace(/\.md$/, '.svg');
      writeFileSync(svg, latencyChart(results));
      log(`chart written to ${svg}`);
    }
  } finally {
    await tp.stop();
  }
}

main().catch((e: unknown) => {
  console.error(`bench:geo: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});

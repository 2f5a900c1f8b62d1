/**
 * A CPU profile of every replica process a benchmark starts: preloaded into each Node process by
 *
 *   REPLICA_PROFILE_DIR=/tmp/p NODE_OPTIONS="--import ./bench/src/replica-cpu-profile.mjs" \
 *     npm run bench:tpcc -- …
 *
 * it profiles only `creek.js start` processes (the replicas LocalCluster spawns, which inherit the
 * environment), and writes `replica-<pid>.cpuprofile` into REPLICA_PROFILE_DIR when the process
 * exits. Node 20 refuses `--cpu-prof` in NODE_OPTIONS; the inspector's Profiler, stopped in an
 * `exit` handler (a session on its own thread answers synchronously), does the same.
 * `npm run bench:replica-profile` sums the profiles up.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.REPLICA_PROFILE_DIR;
const argv = process.argv.slice(1);
if (dir && argv.some((a) => /creek\.js$/.test(a)) && argv.includes('start')) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 200 });
  session.post('Profiler.start');
  process.on('exit', () => {
    session.post('Profiler.stop', (err, result) => {
      if (err === null)
        writeFileSync(
          join(dir, `replica-${process.pid}.cpuprofile`),
          JSON.stringify(result.profile),
        );
    });
  });
}

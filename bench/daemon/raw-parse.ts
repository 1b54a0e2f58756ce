/**
 * The baseline of the daemon benchmark, run in its own process: node:http reads the same watch
 * stream, splits it on newlines and JSON.parses each line, nothing more. Its CPU from the first
 * byte of the response to the last is the floor any watch stands on.
 *
 * Usage: raw-parse.ts <server url> <changes>
 */
import { get } from 'node:http';
import { reportFailure, reportResult } from '../lib/child.js';

const [url = '', changesArg = '0'] = process.argv.slice(2);
const changes = Number(changesArg);

get(`${url}/api/v1/pods?watch=true`, (res) => {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let count = 0;
  let pending = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    pending += chunk;
    let start = 0;
    for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n', start)) {
      const event = JSON.parse(pending.slice(start, nl)) as { type: string };
      if (event.type === 'MODIFIED') count++;
      start = nl + 1;
    }
    pending = pending.slice(start);
  });
  res.on('end', () => {
    const cpu = process.cpuUsage(cpu0);
    if (count !== changes) reportFailure(new Error(`parsed ${count} changes, expected ${changes}`));
    else reportResult({ cpuMs: (cpu.user + cpu.system) / 1000, ms: performance.now() - t0, changes: count });
  });
}).on('error', reportFailure);

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { repoRoot } from '../../../bench/lib/child.js';

// A child program that reports both figures of its own peak: getrusage's and VmHWM.
const CHILD = `import('./bench/lib/proc.ts').then((proc) => console.log(JSON.stringify({
  maxRssMb: process.resourceUsage().maxRSS / 1024,
  vmHwmMb: proc.ownPeakRssMb(),
})))`;

test("a child's peak RSS is its own, not the high-water mark of the parent that spawned it", () => {
  // Touch 300 MiB in this process, then spawn a child that allocates nothing of the kind.
  const held = Buffer.alloc(300 * 2 ** 20, 1);
  const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', CHILD], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  const { maxRssMb, vmHwmMb } = JSON.parse(out) as { maxRssMb: number; vmHwmMb: number };
  assert.equal(held.length, 300 * 2 ** 20);
  // getrusage carries the parent's pre-exec peak into the child: why the benchmarks do not use it.
  assert.ok(maxRssMb >= 300, `maxRSS ${maxRssMb} MiB`);
  // VmHWM is the child's own address space: a Node process with tsx loaded, well under 300 MiB.
  assert.ok(vmHwmMb > 10 && vmHwmMb < 200, `VmHWM ${vmHwmMb} MiB`);
});

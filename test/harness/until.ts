/**
 * Waiting on a condition with real servers: `until` polls `pred` until it holds. Its bound is a
 * safety net that never decides a pass (a loaded machine is slow, not wrong): when it is hit, the
 * wait fails with what it waited for, so a hang is a failure that names itself.
 */
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';

/** How long a wait on a real server is given before it fails: a safety net, far above need. */
export const GIVE_UP_MS = 120_000;

export async function until(
  what: string,
  pred: () => boolean | Promise<boolean>,
  options: { timeoutMs?: number; everyMs?: number; show?: () => string } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? GIVE_UP_MS);
  for (;;) {
    if (await pred()) return;
    if (Date.now() >= deadline) assert.fail(`timed out waiting for: ${what}\n${options.show?.() ?? ''}`);
    await delay(options.everyMs ?? 100);
  }
}

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { watchConnectionHealth } from '../../../src/client/connection-health.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';

/** Just what the health check reads of a socket: its protocol, its read counter, destroy and close. */
class FakeSocket extends EventEmitter {
  bytesRead = 0;
  destroyed = false;
  destroyedWith: Error | undefined;
  readonly remoteAddress = '127.0.0.1';
  readonly remotePort = 6443;
  constructor(readonly alpnProtocol: string | false) {
    super();
  }
  destroy(err?: Error): this {
    this.destroyed = true;
    this.destroyedWith = err;
    this.emit('close');
    return this;
  }
}

const asSocket = (s: FakeSocket): Socket => s as unknown as Socket;

test('an HTTP/2 connection that reads nothing for 20 s is destroyed with an error saying why', async () => {
  const clock = new FakeClock();
  const socket = new FakeSocket('h2');
  const dead: string[] = [];
  watchConnectionHealth(asSocket(socket), { clock, onDead: (e) => dead.push(e.message) });
  await clock.tick(15_000);
  assert.equal(socket.destroyed, false);
  await clock.tick(10_000);
  assert.equal(socket.destroyed, true);
  assert.match(socket.destroyedWith?.message ?? '', /read nothing for 20 s, PINGs unanswered/);
  assert.equal(dead.length, 1);
  assert.equal(clock.pending, 0, 'no check left behind');
});

test('an HTTP/2 connection that keeps reading (PING ACKs) is never cut, however long it lives', async () => {
  const clock = new FakeClock();
  const socket = new FakeSocket('h2');
  watchConnectionHealth(asSocket(socket), { clock });
  for (let i = 0; i < 100; i++) {
    await clock.tick(10_000);
    socket.bytesRead += 17;
  }
  assert.equal(socket.destroyed, false);
  socket.emit('close');
  assert.equal(clock.pending, 0, 'the check stops when the socket closes');
});

test('a check that runs late because the event loop was blocked does not count the block as silence', async () => {
  const clock = new FakeClock();
  const socket = new FakeSocket('h2');
  watchConnectionHealth(asSocket(socket), { clock });
  await clock.tick(4_000);
  // The process is busy for 30 s: no read callback and no timer runs, then the due check fires.
  clock.block(30_000);
  await clock.tick(0);
  assert.equal(socket.destroyed, false, 'a blocked loop is not a dead connection');
  socket.bytesRead += 17;
  await clock.tick(60_000);
  assert.equal(socket.destroyed, true, 'but silence after it still is');
});

test('an HTTP/1.1 connection is left alone: it carries no PING', async () => {
  const clock = new FakeClock();
  const socket = new FakeSocket('http/1.1');
  watchConnectionHealth(asSocket(socket), { clock });
  assert.equal(clock.pending, 0);
  await clock.tick(600_000);
  assert.equal(socket.destroyed, false);
});

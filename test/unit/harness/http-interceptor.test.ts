import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import { once } from 'node:events';
import { HttpInterceptor } from '../../harness/http-interceptor.js';

/** A server that writes the start of an answer and then holds it open, counting its open sockets. */
async function slowServer(): Promise<{ server: Server; url: string; open: () => number }> {
  let open = 0;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"networks":[');
  });
  server.on('connection', (socket) => {
    open++;
    socket.on('close', () => open--);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening');
  return { server, url: `http://127.0.0.1:${address.port}`, open: () => open };
}

test('a client gone in the middle of an answer leaves no connection to the real server behind', async () => {
  const real = await slowServer();
  const proxy = await HttpInterceptor.start(real.url);
  try {
    const client = request(`${proxy.url}/v2.0/networks`);
    client.on('error', () => undefined);
    client.end();
    const [answer] = (await once(client, 'response')) as [NodeJS.ReadableStream];
    await once(answer, 'data');
    assert.equal(real.open(), 1);
    // The client goes away with the answer half through, as a SIGKILLed Raven does.
    client.destroy();
    for (let waited = 0; real.open() > 0; waited += 10) {
      if (waited > 60_000) assert.fail('the upstream connection was never closed');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.deepEqual(proxy.seen, ['GET /v2.0/networks']);
  } finally {
    await proxy.close();
    real.server.closeAllConnections();
    real.server.close();
  }
});

/**
 * Free loopback ports for the servers the harness starts. Every port of one call is held open
 * until all are chosen, so a call never returns the same port twice: ports chosen one by one
 * (listen on 0, close, listen on 0 again) can come back equal, and two components of one server
 * then collide with "address already in use".
 *
 * A port is free when chosen, not when the server binds it: another process may take it between.
 * Starters that can bind late (the control plane) retry on "address already in use".
 */
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';

/** `count` distinct TCP ports free on 127.0.0.1. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const srv = createServer();
          srv.on('error', reject);
          srv.listen(0, '127.0.0.1', () => resolve(srv));
        }),
    ),
  );
  const ports = servers.map((srv) => {
    const addr = srv.address();
    return typeof addr === 'object' && addr !== null ? addr.port : 0;
  });
  await Promise.all(servers.map((srv) => new Promise((r) => srv.close(r))));
  return ports;
}

/** A UDP port free on 127.0.0.1. */
export async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** A node:http server for the ui specs: on 127.0.0.1, port 0, closed with every socket it opened. */
import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import type { Socket } from 'node:net';

export interface TestServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

export async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<TestServer> {
  const sockets = new Set<Socket>();
  const server = createServer(handler);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}


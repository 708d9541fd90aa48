/**
 * MCP servers for the specs, each started and stopped by the spec that uses it: a server in memory (the
 * SDK's own `Server`, linked to a `Client` by `InMemoryTransport`), a stdio server spawned in a process group
 * of its own (killed as a group), and a Streamable HTTP server on 127.0.0.1.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server as HttpServer, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export function newClient(): Client {
  return new Client({ name: 'rx-tool-loop-spec', version: '1.0.0' });
}

/** A client connected to `server` in memory. */
export async function inMemory(server: Server | McpServer): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = newClient();
  await client.connect(clientSide);
  return client;
}

/** A stdio MCP server: the node script `bin` in its own process group, with the client's transport on its stdio. */
export interface StdioServer {
  client: Client;
  pid: number;
  /** Kills the whole process group and waits until the process has exited. */
  kill(): Promise<void>;
  /** Whether any process of the group is still alive. */
  alive(): boolean;
}

export async function spawnStdio(bin: string, args: string[] = []): Promise<StdioServer> {
  const child = spawn(process.execPath, [bin, ...args], { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  const pid = child.pid!;
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  child.stderr.resume(); // the servers log there; read it so that they never block
  const alive = () => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const kill = async () => {
    if (alive()) process.kill(-pid, 'SIGKILL');
    await exited;
  };
  const client = newClient();
  try {
    await client.connect(new ProcessTransport(child, kill));
  } catch (error) {
    await kill();
    throw error;
  }
  return { client, pid, kill, alive };
}

/** The SDK's stdio framing (one JSON message a line) over a child that the spec spawned itself. */
class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();

  constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly stop: () => Promise<void>,
  ) {}

  async start(): Promise<void> {
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      try {
        for (let message = this.buffer.readMessage(); message !== null; message = this.buffer.readMessage()) this.onmessage?.(message);
      } catch (error) {
        this.onerror?.(error as Error);
      }
    });
    this.child.once('close', () => this.onclose?.());
    this.child.on('error', (error) => this.onerror?.(error));
    this.child.stdin.on('error', (error) => this.onerror?.(error));
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.stdin.write(serializeMessage(message))) resolve();
      else this.child.stdin.once('drain', () => resolve());
    });
  }

  close(): Promise<void> {
    return this.stop();
  }
}

/** A Streamable HTTP MCP server on 127.0.0.1 (a free port): one `McpServer` (or low-level `Server`) per session, made by `make`. */
export interface HttpMcpServer {
  url: URL;
  /** A client connected to it over Streamable HTTP (`client` to connect one the spec made itself). */
  connect(client?: Client): Promise<Client>;
  /** Dies as a crashed server does: every open socket is destroyed and nothing more is accepted. */
  die(): void;
  close(): Promise<void>;
}

/** `received`: sees every message a session's server receives (a `notifications/cancelled` included) before it does. */
export async function startHttp(make: () => McpServer | Server, received?: (message: JSONRPCMessage) => void): Promise<HttpMcpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const servers: (McpServer | Server)[] = [];
  const clients: Client[] = [];
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const id = request.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (transport === undefined) {
      if (request.method !== 'POST' || id !== undefined) {
        response.writeHead(404).end();
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (session) => void sessions.set(session, created),
      });
      const server = make();
      servers.push(server);
      await server.connect(created);
      const deliver = created.onmessage;
      if (received !== undefined && deliver !== undefined) {
        created.onmessage = (message, extra) => {
          received(message);
          deliver.call(created, message, extra);
        };
      }
      transport = created;
    }
    await transport.handleRequest(request, response);
  };
  const http: HttpServer = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  const sockets = new Set<Socket>();
  http.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  const closed = new Promise<void>((resolve) => http.once('close', () => resolve()));
  return {
    url,
    async connect(client = newClient()) {
      await client.connect(new StreamableHTTPClientTransport(url));
      clients.push(client);
      return client;
    },
    die() {
      if (http.listening) http.close();
      for (const socket of sockets) socket.destroy();
    },
    async close() {
      await Promise.all(clients.map((client) => client.close()));
      await Promise.all(servers.map((server) => server.close()));
      http.closeAllConnections();
      if (http.listening) http.close();
      await closed;
    },
  };
}

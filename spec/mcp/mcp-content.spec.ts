/**
 * F3: MCP content passes through — image and audio contents and embedded resource blobs become the result's
 * attachments, text resources join the text, a resource_link stays a line — from an SDK `McpServer` on 127.0.0.1
 * to the next request the model gets.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { ToolRegistry, runEventedToolLoop, scriptedProvider } from 'rx-tool-loop';
import { mcpOutput, mcpTools } from 'rx-tool-loop/mcp';
import { anthropicRequest } from '../../src/providers/anthropic.js';
import { answerTurn, call, only, toolTurn } from '../support/events';
import { type HttpMcpServer, startHttp } from './support/servers';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const PDF = Buffer.from('%PDF-1.4 tiny').toString('base64');

function chartServer(): McpServer {
  const server = new McpServer({ name: 'charts', version: '1.0.0' });
  server.registerTool('chart', { description: 'Draws a chart' }, () => ({
    content: [
      { type: 'text', text: 'Here is the chart.' },
      { type: 'image', mimeType: 'image/png', data: PNG },
      { type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' },
      { type: 'resource', resource: { uri: 'file:///reports/q3.pdf', mimeType: 'application/pdf', blob: PDF } },
      { type: 'resource', resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'Sales rose in Q3.' } },
      { type: 'resource_link', uri: 'file:///big.csv', name: 'big.csv' },
    ],
  }));
  return server;
}

describe('F3: MCP content passes through as attachments', () => {
  let http: HttpMcpServer;
  beforeAll(async () => {
    http = await startHttp(chartServer);
  });
  afterAll(() => http.close());

  it('F3: an McpServer over Streamable HTTP: the result carries the image, audio and blob; the model gets them on its next turn', async () => {
    const client = await http.connect();
    const registry = new ToolRegistry();
    for (const tool of await firstValueFrom(mcpTools(client))) registry.register(tool);
    const provider = scriptedProvider([toolTurn(call('chart')), answerTurn('A rising line.')]);
    const events = await lastValueFrom(runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'Chart Q3' }] }).pipe(toArray()));
    const [result] = only(events, 'tool_result').map((e) => e.message);
    expect(result!.content).toBe('Here is the chart.\nSales rose in Q3.\n[resource_link file:///big.csv]');
    expect(result!.attachments).toEqual([
      { type: 'image', mimeType: 'image/png', data: PNG },
      { type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' },
      { type: 'file', mimeType: 'application/pdf', data: PDF, name: 'q3.pdf' },
    ]);
    // the second provider call sees them in the history, and a provider sends them (F2)
    const seen = provider.inputs[1]!.messages[2]!;
    expect(seen).toEqual(result);
    const body = anthropicRequest('m', 1, undefined, provider.inputs[1]!) as { messages: { content: { content: { type: string }[] }[] }[] };
    expect(body.messages[2]!.content[0]!.content.map((block) => block.type)).toEqual(['text', 'image', 'text', 'document']);
  });

  it('F3: content a server got wrong stays a line, never a failed result: an image without a MIME type, audio that is not base64', () => {
    const output = mcpOutput({
      content: [
        { type: 'image', data: PNG },
        { type: 'audio', mimeType: 'audio/wav', data: 'not base64!' },
        { type: 'resource', resource: { uri: 'file:///x.bin', blob: 'AAAA' } },
      ],
    });
    expect(output.content).toBe(`[image ${Buffer.from(PNG, 'base64').length} bytes]\n[audio audio/wav, 7 bytes]`);
    expect(output.attachments).toEqual([{ type: 'file', mimeType: 'application/octet-stream', data: 'AAAA', name: 'x.bin' }]);
  });
});

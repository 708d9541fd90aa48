import { acpPrompt } from 'rx-tool-loop/acp';

describe('acpPrompt', () => {
  it('E1: text blocks are the text, a line each; images and audio are attachments with their bytes', () => {
    expect(
      acpPrompt([
        { type: 'text', text: 'Describe' },
        { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
        { type: 'text', text: 'and transcribe' },
        { type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' },
      ]),
    ).toEqual({
      role: 'user',
      content: 'Describe\nand transcribe',
      attachments: [
        { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
        { type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' },
      ],
    });
  });

  it('E1: an embedded text resource is its text under its URI, a blob a file attachment named by its URI, a link and an image without bytes a line', () => {
    expect(
      acpPrompt([
        { type: 'resource', resource: { uri: 'file:///a.ts', text: 'let a;' } },
        { type: 'resource', resource: { uri: 'file:///b.pdf', blob: 'JVBERi0=', mimeType: 'application/pdf' } },
        { type: 'resource', resource: { uri: 'file:///c.bin', blob: 'AAAA' } },
        { type: 'resource_link', name: 'd.md', uri: 'file:///d.md' },
        { type: 'image', mimeType: 'image/png', data: '', uri: 'file:///e.png' },
      ]),
    ).toEqual({
      role: 'user',
      content: 'file:///a.ts\n```\nlet a;\n```\n[d.md](file:///d.md)\n[image](file:///e.png)',
      attachments: [
        { type: 'file', mimeType: 'application/pdf', data: 'JVBERi0=', name: 'file:///b.pdf' },
        { type: 'file', mimeType: 'application/octet-stream', data: 'AAAA', name: 'file:///c.bin' },
      ],
    });
  });

  it('E1: an embedded blob\'s attachment type is its MIME type\'s, as an MCP blob\'s (F3): an image is an image, a sound audio', () => {
    expect(
      acpPrompt([
        { type: 'resource', resource: { uri: 'file:///shot.png', blob: 'iVBORw0KGgo=', mimeType: 'image/png' } },
        { type: 'resource', resource: { uri: 'file:///memo.wav', blob: 'UklGRg==', mimeType: 'audio/wav' } },
      ]).attachments,
    ).toEqual([
      { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=', name: 'file:///shot.png' },
      { type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==', name: 'file:///memo.wav' },
    ]);
  });

  it('E1: a prompt with no text and no attachment is an empty user message', () => {
    expect(acpPrompt([])).toEqual({ role: 'user', content: '' });
  });
});

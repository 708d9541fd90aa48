/**
 * s07, the session tree: every message is appended once to a log (a JSONL file here), a branch is a move of
 * the leaf, and the tree is what a restart loads back. Two prompts, a branch back to the first answer, a third
 * prompt on that branch — which the model answers without the second, which is not on its path — then the
 * tree, loaded again from the file (S6).
 *
 *   npm run s07
 *
 * The same session against a real model (the key comes from OPENAI_API_KEY / ANTHROPIC_API_KEY):
 *
 *   npm run s07 -- --provider openai --model gpt-4o-mini
 *   npm run s07 -- --provider anthropic --model claude-sonnet-4-5
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, of, tap, toArray } from 'rxjs';
import { type ConversationEvent, type Provider, ToolRegistry, conversation } from '../src/index.js';
import { type SessionEntry, type SessionStore, SessionTree, jsonlStore, persist } from '../src/sessions/index.js';
import { chatProvider } from './chat.js';
import { FIXED_NOW, providerFromArgs } from './series-demo.js';

const registry = new ToolRegistry().register({
  name: 'current_time',
  description: 'Returns the current time as an ISO 8601 string',
  input: {},
  handler: () => FIXED_NOW,
});

/** One prompt on the tree's leaf, saved as it goes; prints the prompt, the tools and the answer. */
async function ask(tree: SessionTree, store: SessionStore, provider: Provider, prompt: string): Promise<void> {
  console.log(`[user]\n${prompt}`);
  const end = await lastValueFrom(
    of(prompt).pipe(
      conversation({ provider, registry, messages: tree.context() }),
      persist(tree, store),
      tap((event: ConversationEvent) => {
        if (event.type === 'tool_call') console.log(`tool_call: ${event.call.name}`);
        if (event.type === 'tool_result') console.log(`tool_result: ${event.message.content}`);
      }),
    ),
  );
  if (end.type !== 'loop_end') throw new Error(`the loop ended with ${end.type}`);
  if (end.reason === 'error') throw new Error(`s07: ${end.assistant.errorMessage ?? 'the model call failed'}`);
  console.log(`[assistant]\n${end.assistant.content}\n`);
}

/** The tree as text: each entry under the one it follows, the leaf marked, the moves listed. */
function drawTree(tree: SessionTree, entries: readonly SessionEntry[]): string {
  const children = new Map<string | null, SessionEntry[]>();
  for (const entry of entries) if (entry.type !== 'leaf') children.set(entry.parentId, [...(children.get(entry.parentId) ?? []), entry]);
  const lines: string[] = [];
  const draw = (entry: SessionEntry, lead: string, branch: string, rest: string) => {
    lines.push(`${lead}${branch}${entry.id} ${label(entry)}${entry.id === tree.leaf ? '   <- leaf' : ''}`);
    const below = children.get(entry.id) ?? [];
    below.forEach((child, index) => draw(child, lead + rest, index === below.length - 1 ? '└─ ' : '├─ ', index === below.length - 1 ? '   ' : '│  '));
  };
  for (const root of children.get(null) ?? []) draw(root, '', '', '');
  for (const entry of entries) if (entry.type === 'leaf') lines.push(`(${entry.id}: moveTo ${entry.targetId})`);
  return lines.join('\n');
}

function label(entry: SessionEntry): string {
  if (entry.type === 'compaction') return `compaction: ${entry.summary}`;
  if (entry.type === 'leaf') return `moveTo ${entry.targetId}`;
  const { message } = entry;
  if (message.role === 'assistant' && message.toolCalls !== undefined && message.toolCalls.length > 0) {
    return `assistant[${message.toolCalls.map((call) => call.name).join(',')}]${message.content === '' ? '' : ` ${message.content}`}`;
  }
  return `${message.role}: ${message.content}`;
}

async function main(): Promise<void> {
  const provider = providerFromArgs('s07', process.argv.slice(2), chatProvider(0));
  if (provider === undefined) return;
  const folder = mkdtempSync(join(tmpdir(), 's07-'));
  try {
    const file = join(folder, 'session.jsonl');
    console.log('s07: Session Tree\n');
    const tree = await lastValueFrom(SessionTree.load(jsonlStore(file)));
    const store = jsonlStore(file);

    await ask(tree, store, provider, 'What time is it?');
    const firstAnswer = tree.leaf!;
    await ask(tree, store, provider, 'Thanks! What did I ask before?');

    console.log(`[branch]\nmoveTo ${firstAnswer} (the first answer)\n`);
    tree.moveTo(firstAnswer);
    await ask(tree, store, provider, 'And what was my first question?');

    // what a restart sees: the file, loaded again
    const reloaded = await lastValueFrom(SessionTree.load(jsonlStore(file)));
    const entries = await lastValueFrom(jsonlStore(file).load().pipe(toArray()));
    console.log(`[tree]\n${drawTree(reloaded, entries)}\n`);
    console.log(`[context]\n${reloaded.context().map((message) => message.role).join(' -> ')}`);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});

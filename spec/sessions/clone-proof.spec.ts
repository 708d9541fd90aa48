/**
 * R34's proof for sessions: `persist` learns what it records from the events alone. The same scripted chat —
 * prompts, tool calls, compactions by `compactWhen` (one of them on a turn that is then aborted), and a second
 * session that goes on from the reloaded, compacted tree — is saved twice: once as the events come, once through
 * `map((e) => structuredClone(e))` (and a JSON copy), so that no object of the loop's reaches `persist`. The stores' entries
 * (a memoryStore's, and a jsonlStore file's bytes) and the trees' contexts are the same, and they hold the
 * compactions.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NEVER, Observable, Subject, concat, identity, lastValueFrom, map, of, toArray } from 'rxjs';
import type { AgentMessage, ConversationEvent, LoopEventOf, Provider, ProviderEvent } from '../../src/index.js';
import { conversation } from '../../src/index.js';
import { type SessionEntry, type SessionStore, SessionTree, compactWhen, jsonlStore, memoryStore, persist } from '../../src/sessions/index.js';
import { historyModel, historyTools } from './support/model.js';

let folder = '';
beforeAll(() => (folder = mkdtempSync(join(tmpdir(), 'rx-tool-loop-r34-'))));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
// the entries' `at` from one fixed clock, so that two runs write the same bytes
beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(Date.UTC(2026, 0, 1)));
afterEach(() => jest.restoreAllMocks());

/** historyModel, but a prompt that says `wait` gets a reply that calls `slow` and never ends: the abort's turn. */
function chatModel(): Provider {
  const model = historyModel();
  return (input) => {
    const last = input.messages[input.messages.length - 1];
    if (last?.role !== 'user' || !last.content.includes('wait')) return model(input);
    const start: ProviderEvent[] = [{ type: 'message_start' }, { type: 'text_delta', text: 'Waiting' }, { type: 'tool_call', call: { id: 'slow_1', name: 'slow', input: {} } }];
    return concat(of(...start), NEVER);
  };
}

const registry = () => historyTools().register({ name: 'slow', description: 'never ends', input: {}, handler: () => NEVER });

/** One session: the prompts, one after the other (each turn is synchronous but the one that waits), then an abort if asked. */
async function session(store: SessionStore, prompts: readonly string[], between: (events: Observable<ConversationEvent>) => Observable<ConversationEvent>, abort: boolean) {
  const tree = await lastValueFrom(SessionTree.load(store));
  const abort$ = new Subject<void>();
  const prompts$ = new Subject<string>();
  const done = lastValueFrom(
    prompts$.pipe(
      conversation({
        provider: chatModel(),
        registry: registry(),
        messages: tree.context(),
        abort$,
        prepareTurn: compactWhen({ maxTokens: 120, keepRecentTokens: 40, summarize: (messages) => of(`SUMMARY of ${messages.map((m) => m.role).join(' ')}`) }),
      }),
      between,
      persist(tree, store),
      toArray(),
    ),
  ).then(() => undefined);
  for (const prompt of prompts) prompts$.next(prompt);
  if (abort) abort$.next();
  prompts$.complete();
  await done;
  return tree;
}

/** The whole scripted chat into `store`, `between` its conversation and persist; what the store and the trees hold. */
async function chat(store: SessionStore, between: (events: Observable<ConversationEvent>) => Observable<ConversationEvent>) {
  const first = await session(store, ['What time is it? '.repeat(20), 'and now, what time is it?', 'thanks', 'Please wait. '.repeat(30)], between, true);
  const second = await session(store, ['and what time is it now?', 'thanks again', 'what time is it, once more?'], between, false);
  const entries = await lastValueFrom(store.load().pipe(toArray()));
  const reloaded = await lastValueFrom(SessionTree.load(store));
  return { entries, contexts: [first.context(), second.context(), reloaded.context()] };
}

const clone = map((event: ConversationEvent) => structuredClone(event));
const compactions = (entries: readonly SessionEntry[]) => entries.filter((entry) => entry.type === 'compaction');

describe('R34: persist learns from the events alone', () => {
  it('R34: a structuredClone of every event between conversation() and persist changes nothing the memoryStore holds, nor tree.context(): compactions (one on an aborted turn) included', async () => {
    const plain = await chat(memoryStore(), identity);
    const cloned = await chat(memoryStore(), clone);
    // the chat did what the proof needs: compactions in both sessions, and the abort stored as the loop kept it
    const made = compactions(plain.entries);
    expect(made.length).toBeGreaterThanOrEqual(2);
    const aborted = plain.entries.findIndex((entry) => entry.type === 'message' && entry.message.role === 'assistant' && entry.message.stopReason === 'aborted');
    expect(aborted).toBeGreaterThan(0);
    expect(plain.entries[aborted - 1]!.type).toBe('compaction'); // the aborted turn had compacted: recorded before its messages
    expect(plain.contexts[2]![0]).toEqual({ role: 'user', content: (made[made.length - 1] as Extract<SessionEntry, { type: 'compaction' }>).summary });

    expect(cloned.entries).toEqual(plain.entries);
    expect(cloned.contexts).toEqual(plain.contexts);
    // and a JSON copy, as events that crossed a wire are
    const copied = await chat(memoryStore(), map((event: ConversationEvent) => JSON.parse(JSON.stringify(event)) as ConversationEvent));
    expect(copied.entries).toEqual(plain.entries);
    expect(copied.contexts).toEqual(plain.contexts);
  });

  it('R34: the same for a jsonlStore, byte for byte', async () => {
    const plainPath = join(folder, 'plain.jsonl');
    const clonedPath = join(folder, 'cloned.jsonl');
    const plain = await chat(jsonlStore(plainPath), identity);
    const cloned = await chat(jsonlStore(clonedPath), clone);
    expect(compactions(plain.entries).length).toBeGreaterThanOrEqual(2);
    expect(readFileSync(clonedPath, 'utf8')).toBe(readFileSync(plainPath, 'utf8'));
    expect(cloned.contexts).toEqual(plain.contexts);
  });

  it('R34, S5: what persist records of a compaction is what the turn_end says: its summary, kept from the message at firstKept', async () => {
    const store = memoryStore();
    const tree = await lastValueFrom(SessionTree.load(store));
    const events = await lastValueFrom(
      of('What time is it? '.repeat(20), 'and now, what time is it?').pipe(
        conversation({ provider: historyModel(), registry: historyTools(), messages: tree.context(), prepareTurn: compactWhen({ maxTokens: 120, keepRecentTokens: 40, summarize: () => of('SUMMARY') }) }),
        clone,
        persist(tree, store),
        toArray(),
      ),
    );
    const compacted = events.filter((e): e is LoopEventOf<'turn_end'> => e.type === 'turn_end' && e.compaction !== undefined);
    expect(compacted.length).toBeGreaterThan(0);
    const entries = await lastValueFrom(store.load().pipe(toArray()));
    const byId = new Map(entries.map((entry) => [entry.id, entry]));
    const recorded = compactions(entries) as Extract<SessionEntry, { type: 'compaction' }>[];
    expect(recorded.map((entry) => entry.summary)).toEqual(compacted.map((event) => event.compaction!.summary));
    recorded.forEach((entry, index) => {
      const { firstKept } = compacted[index]!.compaction!;
      expect((byId.get(entry.firstKeptId) as { message: AgentMessage }).message).toEqual(compacted[index]!.messages[firstKept]);
    });
  });
});

/** J2, J3: the typed answer — checked where the loop would end, answer turns and a repair when it is not valid. */
import { NEVER, Observable, Subject, concat, lastValueFrom, of, toArray } from 'rxjs';
import { z } from 'zod';
import {
  AgentMessage,
  JsonSchemaObject,
  LoopEvent,
  ProviderEvent,
  StandardSchemaV1,
  ToolRegistry,
  UserMessage,
  conversation,
  runEventedToolLoop,
  scriptedProvider,
} from '../../src/index.js';
import { answerTurn, call, collectSync, end, loopEndOf, only, start, tool, toolTurn } from '../support/events.js';

const ask = (content = 'Weather in Oslo?'): AgentMessage[] => [{ role: 'user', content }];
const city = z.object({ city: z.string(), celsius: z.number() });
const oslo = '{"city":"Oslo","celsius":4}';
const registry = () =>
  new ToolRegistry().register(tool('weather', () => 'cloudy, 4 °C')).register(tool('finish', () => ({ content: 'done', terminate: true })));
const run = (script: Parameters<typeof scriptedProvider>[0], options: { maxTurns?: number; output?: { schema?: StandardSchemaV1; jsonSchema?: JsonSchemaObject; name?: string } } = {}) => {
  const provider = scriptedProvider(script);
  const { values, completed } = collectSync(runEventedToolLoop({ provider, registry: registry(), messages: ask(), output: { schema: city }, ...options }));
  return { provider, events: values, completed, end: loopEndOf(values) };
};
const turnStarts = (events: readonly LoopEvent[]) => only(events, 'turn_start').map((e) => (e.answer === true ? `${e.turn} answer` : `${e.turn}`));
const roles = (messages: readonly AgentMessage[]) => messages.map((m) => (m.role === 'assistant' ? `assistant ${m.stopReason}` : m.role));
const ISSUE = 'celsius: Invalid input: expected number, received string';

describe('J2 the answer turn', () => {
  it('J2: a last text that is a valid answer ends the loop with it: output, no extra call, no answer turn', () => {
    const { provider, events, end: last } = run([toolTurn(call('weather')), answerTurn(oslo)]);
    expect(provider.inputs).toHaveLength(2);
    expect(provider.inputs.map((input) => input.output)).toEqual([undefined, undefined]);
    expect(turnStarts(events)).toEqual(['1', '2']);
    expect([last.reason, last.output]).toEqual(['stop', { city: 'Oslo', celsius: 4 }]);
  });

  it('J2: otherwise an answer turn runs, asked for the output with no tools, after a prompt (the last word was the model’s)', () => {
    const { provider, events, end: last } = run([toolTurn(call('weather')), answerTurn('It is cloudy in Oslo.'), answerTurn(oslo)]);
    expect(provider.inputs).toHaveLength(3);
    expect(provider.inputs[1]!.tools.map((t) => t.name)).toEqual(['weather', 'finish']);
    const answerInput = provider.inputs[2]!;
    expect(answerInput.tools).toEqual([]);
    expect(answerInput.output?.name).toBe('answer');
    expect(answerInput.output?.schema).toMatchObject({ type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'] });
    expect(turnStarts(events)).toEqual(['1', '2', '3 answer']);
    expect(answerInput.messages[answerInput.messages.length - 1]).toEqual({ role: 'user', content: 'Answer with JSON that matches the schema "answer".' });
    expect([last.reason, last.output, last.assistant.content]).toEqual(['stop', { city: 'Oslo', celsius: 4 }, oslo]);
    expect(roles(last.messages)).toEqual(['user', 'assistant toolUse', 'toolResult', 'assistant stop', 'user', 'assistant stop']);
  });

  it('J2: an invalid answer gets one repair turn, after a user message naming the issues', () => {
    const { provider, events, end: last } = run([answerTurn('Oslo, 4 degrees'), answerTurn('{"city":"Oslo","celsius":"4"}'), answerTurn(oslo)]);
    expect(provider.inputs).toHaveLength(3);
    expect(turnStarts(events)).toEqual(['1', '2 answer', '3 answer']);
    const repair = provider.inputs[2]!.messages.at(-1) as UserMessage;
    expect(repair).toEqual({ role: 'user', content: `Your answer does not match the schema "answer": ${ISSUE}. Answer again with JSON that matches it.` });
    expect(provider.inputs[2]!.output).toEqual(provider.inputs[1]!.output);
    expect([last.reason, last.output]).toEqual(['stop', { city: 'Oslo', celsius: 4 }]);
  });

  it('J2: still invalid after the repair: loop_end error, "output does not match the schema: ISSUES", the history keeping every turn', () => {
    const { provider, end: last, completed } = run([answerTurn('Oslo'), answerTurn('{"city":"Oslo"}'), answerTurn('{"city":"Oslo","celsius":"4"}')]);
    expect(completed).toBe(true);
    expect(provider.inputs).toHaveLength(3); // one answer turn and one repair, no more
    expect(last.reason).toBe('error');
    expect(last.output).toBeUndefined();
    expect(last.assistant).toMatchObject({ content: '{"city":"Oslo","celsius":"4"}', stopReason: 'error', errorMessage: `output does not match the schema: ${ISSUE}` });
    expect(roles(last.messages)).toEqual(['user', 'assistant stop', 'user', 'assistant stop', 'user', 'assistant stop']);
    expect((last.messages[4] as UserMessage).content).toContain('celsius: Invalid input: expected number, received undefined');
  });

  it('J2: text that is no JSON at all is an issue at the root, named after the output', () => {
    const { end: last } = run([answerTurn('x'), answerTurn('still no JSON'), answerTurn('nor this')], { output: { schema: city, name: 'forecast' } });
    expect(last.assistant.errorMessage).toMatch(/^output does not match the schema: forecast: not JSON: /);
  });

  it('J2: a jsonSchema alone: only required and the types are checked locally, the parsed JSON is the output', () => {
    const jsonSchema: JsonSchemaObject = { type: 'object', properties: { city: { type: 'string', minLength: 50 }, days: { type: 'array', items: { type: 'integer' } } }, required: ['city'] };
    const valid = run([answerTurn('{"city":"Oslo","days":[1,2]}')], { output: { jsonSchema } });
    expect([valid.provider.inputs.length, valid.end.output]).toEqual([1, { city: 'Oslo', days: [1, 2] }]); // minLength is the API's to hold
    const invalid = run([answerTurn('{"days":[1,2.5]}'), answerTurn('{"city":3}'), answerTurn('[]')], { output: { jsonSchema } });
    const prompts = invalid.provider.inputs.map((input) => (input.messages.at(-1) as UserMessage).content);
    expect(prompts[2]).toContain('city: expected string, got integer.');
    expect(invalid.end.assistant.errorMessage).toBe('output does not match the schema: answer: expected object, got array');
    const nested = run([answerTurn('{"days":[1,2.5]}'), answerTurn('{"city":"a"}')], { output: { jsonSchema } });
    expect((nested.provider.inputs[1]!.messages.at(-1) as UserMessage).content).toBe('Answer with JSON that matches the schema "answer".');
    expect(nested.end.output).toEqual({ city: 'a' });
    const both = run([answerTurn('{"days":[1,2.5]}'), answerTurn('{"days":[1,2.5]}'), answerTurn('{}')], { output: { jsonSchema } });
    expect((both.provider.inputs[2]!.messages.at(-1) as UserMessage).content).toContain('city: required; days.1: expected integer, got number');
  });

  it('J2: a validator that answers with a Promise is awaited; its output (not the JSON) is the answer', async () => {
    const trimmed: StandardSchemaV1<unknown, { city: string }> = {
      '~standard': {
        version: 1,
        vendor: 'by-hand',
        validate: async (value) => {
          const given = (value as { city?: unknown }).city;
          return typeof given === 'string' ? { value: { city: given.trim() } } : { issues: [{ message: 'Required', path: ['city'] }] };
        },
      },
    };
    const provider = scriptedProvider([answerTurn('{"town":"Oslo"}'), answerTurn('{"city":"  Oslo "}')]);
    const events = await lastValueFrom(
      runEventedToolLoop({ provider, registry: registry(), messages: ask(), output: { schema: trimmed, jsonSchema: { type: 'object', properties: { city: { type: 'string' } } } } }).pipe(toArray()),
    );
    expect(turnStarts(events)).toEqual(['1', '2 answer']);
    expect(loopEndOf(events).output).toEqual({ city: 'Oslo' });
  });

  it('J2: an answer of length (cut off) before any answer turn ends the loop as before: no answer turn, no output', () => {
    const { provider, end: last } = run([[start, { type: 'text_delta', text: '{"city":' }, end('length')]]);
    expect([provider.inputs.length, last.reason, 'output' in last]).toEqual([1, 'length', false]);
  });
});

// the same runs with a zod schema and with a bare JSON Schema (only `required` and the types checked locally)
const bareSchema: JsonSchemaObject = { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'] };
describe.each([
  ['a zod schema', { schema: city }, 'celsius: Invalid input: expected number, received string'],
  ['a bare JSON Schema', { jsonSchema: bareSchema }, 'celsius: expected number, got string'],
])('J2, J3 with %s', (_kind, output, issue) => {
  const wrong = '{"city":"Oslo","celsius":"4"}';
  it('J2: valid on the first try: no extra call', () => {
    const { provider, end: last } = run([answerTurn(oslo)], { output });
    expect([provider.inputs.length, last.reason, last.output]).toEqual([1, 'stop', { city: 'Oslo', celsius: 4 }]);
  });
  it('J2: the answer turn, then the repair naming the issue, then valid', () => {
    const { provider, events, end: last } = run([answerTurn('Oslo, 4 °C'), answerTurn(wrong), answerTurn(oslo)], { output });
    expect(turnStarts(events)).toEqual(['1', '2 answer', '3 answer']);
    expect((provider.inputs[2]!.messages.at(-1) as UserMessage).content).toContain(`"answer": ${issue}.`);
    expect([last.reason, last.output]).toEqual(['stop', { city: 'Oslo', celsius: 4 }]);
  });
  it('J2: invalid after the repair: error with the issues', () => {
    const { end: last } = run([answerTurn('Oslo'), answerTurn(wrong), answerTurn(wrong)], { output });
    expect([last.reason, last.assistant.errorMessage]).toEqual(['error', `output does not match the schema: ${issue}`]);
  });
  it('J3: the cap: the answer turn runs, maxTurns with output', () => {
    const { provider, end: last } = run([toolTurn(call('weather')), answerTurn(oslo)], { output, maxTurns: 1 });
    expect([provider.inputs[1]!.tools, last.reason, last.output]).toEqual([[], 'maxTurns', { city: 'Oslo', celsius: 4 }]);
  });
});

describe('J4 the answer typed from the schema', () => {
  it('J4: loop_end.output is the validator’s output (its defaults filled in, its transforms made), not the parsed JSON', () => {
    const schema = z.object({ city: z.string().transform((name) => name.toUpperCase()), days: z.number().default(1) });
    const provider = scriptedProvider([answerTurn('{"city":"Oslo"}')]);
    const { values } = collectSync(runEventedToolLoop({ provider, registry: registry(), messages: ask(), output: { schema } }));
    expect(loopEndOf(values).output).toEqual({ city: 'OSLO', days: 1 }); // its type, inferred: spec/loop/output.types.ts
  });
});

describe('J3 the cap reserves the answer turn', () => {
  it('J3: an answer turn cut at length is judged as any answer: not JSON, so the repair turn follows', () => {
    const { provider, events, end: last } = run([toolTurn(call('weather')), [start, { type: 'text_delta', text: '{"city":"Os' }, end('length')], answerTurn(oslo)], { maxTurns: 1 });
    expect(turnStarts(events)).toEqual(['1', '2 answer', '3 answer']);
    expect((provider.inputs[2]!.messages.at(-1) as UserMessage).content).toMatch(/^Your answer does not match the schema "answer": answer: not JSON: /);
    expect([last.reason, last.output]).toEqual(['maxTurns', { city: 'Oslo', celsius: 4 }]);
  });

  it('J3: maxTurns reached on a turn that asked for tools: the answer turn still runs (no tools), the reason stays maxTurns, with output', () => {
    const { provider, events, end: last } = run([toolTurn(call('weather')), toolTurn(call('weather')), answerTurn(oslo)], { maxTurns: 2 });
    expect(provider.inputs).toHaveLength(3);
    expect(provider.inputs[2]!.tools).toEqual([]);
    expect(provider.inputs[2]!.messages.at(-1)?.role).toBe('toolResult'); // no prompt: the results had the last word
    expect(turnStarts(events)).toEqual(['1', '2', '3 answer']);
    expect([last.reason, last.output]).toEqual(['maxTurns', { city: 'Oslo', celsius: 4 }]);
  });

  it('J3: the cap, then an invalid answer and a repair: the reason stays maxTurns (at most maxTurns + 2 provider calls)', () => {
    const { provider, events, end: last } = run([toolTurn(call('weather')), answerTurn('{}'), answerTurn(oslo)], { maxTurns: 1 });
    expect(provider.inputs).toHaveLength(3);
    expect(turnStarts(events)).toEqual(['1', '2 answer', '3 answer']);
    expect([last.reason, last.output]).toEqual(['maxTurns', { city: 'Oslo', celsius: 4 }]);
  });

  it('J3: terminated by the tools: the answer turn runs, the reason stays terminated', () => {
    const { provider, end: last } = run([toolTurn(call('finish')), answerTurn(oslo)]);
    expect(provider.inputs).toHaveLength(2);
    expect([last.reason, last.output]).toEqual(['terminated', { city: 'Oslo', celsius: 4 }]);
  });

  it('J3: an abort during the answer turn ends the loop aborted, as any turn: no output, no repair', () => {
    const controller = new AbortController();
    const provider = scriptedProvider([toolTurn(call('weather')), toolTurn(call('weather'))]);
    let answerCalls = 0;
    const events = collectSync(
      runEventedToolLoop({
        provider: (input) => (input.output === undefined ? provider(input) : (answerCalls++, concat(of<ProviderEvent>(start), NEVER))),
        registry: registry(),
        messages: ask(),
        maxTurns: 2,
        output: { schema: city },
        signal: controller.signal,
      }),
    );
    expect(turnStarts(events.values)).toEqual(['1', '2', '3 answer']);
    controller.abort();
    const last = loopEndOf(events.values);
    expect([answerCalls, last.reason, 'output' in last, events.completed]).toEqual([1, 'aborted', false, true]);
  });

  it('J3: aborted between the cap and the answer turn: no answer turn', () => {
    const controller = new AbortController();
    const provider = scriptedProvider([toolTurn(call('weather')), answerTurn(oslo)]);
    const registryAborting = new ToolRegistry().register(tool('weather', () => (controller.abort(), 'cloudy')));
    const { values } = collectSync(runEventedToolLoop({ provider, registry: registryAborting, messages: ask(), maxTurns: 1, output: { schema: city }, signal: controller.signal }));
    expect([provider.inputs.length, loopEndOf(values).reason]).toEqual([1, 'aborted']);
  });

  it('J3: an error in the answer turn ends the loop with that error: no repair, no output', () => {
    const failing = scriptedProvider([toolTurn(call('weather')), [start, end('error', { errorMessage: 'provider error: HTTP 500' })]]);
    const { values } = collectSync(runEventedToolLoop({ provider: failing, registry: registry(), messages: ask(), maxTurns: 1, output: { schema: city } }));
    const last = loopEndOf(values);
    expect([failing.inputs.length, last.reason, last.assistant.errorMessage, 'output' in last]).toEqual([2, 'error', 'provider error: HTTP 500', false]);
    const throwing = collectSync(
      runEventedToolLoop({ provider: (input) => (input.output === undefined ? of(start, call('weather'), end('toolUse')) : new Observable<ProviderEvent>((s) => s.error(new Error('socket hang up')))), registry: registry(), messages: ask(), maxTurns: 1, output: { schema: city } }),
    );
    expect(loopEndOf(throwing.values).assistant.errorMessage).toBe('provider error: socket hang up');
  });
});

describe('J2, J3 in conversations and resumed runs', () => {
  it('J2: conversation() over several prompts: each loop ends with its own typed answer', () => {
    const provider = scriptedProvider([answerTurn('{"city":"Oslo","celsius":4}'), toolTurn(call('weather')), answerTurn('Warm.'), answerTurn('{"city":"Rome","celsius":21}')]);
    const prompts = new Subject<string>();
    const { values } = collectSync(prompts.pipe(conversation({ provider, registry: registry(), output: { schema: city } })));
    prompts.next('Oslo?');
    prompts.next('Rome?');
    prompts.complete();
    expect(only(values, 'loop_end').map((e) => [e.reason, e.output])).toEqual([
      ['stop', { city: 'Oslo', celsius: 4 }],
      ['stop', { city: 'Rome', celsius: 21 }],
    ]);
    expect(only(values, 'turn_start').map((e) => e.answer === true)).toEqual([false, false, false, true]);
    expect(provider.inputs[1]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']); // the second loop starts from the first's history
  });

  it('J2: a resumed run (R22): turn 0 finishes the saved calls, then the model answers; terminated at turn 0, the answer turn runs', () => {
    const saved: AgentMessage[] = [...ask(), { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'w', name: 'weather', input: {} }] }];
    const resumed = scriptedProvider([answerTurn(oslo)]);
    const a = collectSync(runEventedToolLoop({ provider: resumed, registry: registry(), messages: saved, output: { schema: city } }));
    expect(turnStarts(a.values)).toEqual(['0', '1']);
    expect(loopEndOf(a.values).output).toEqual({ city: 'Oslo', celsius: 4 });
    const finishing: AgentMessage[] = [...ask(), { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'f', name: 'finish', input: {} }] }];
    const answered = scriptedProvider([answerTurn(oslo)]);
    const b = collectSync(runEventedToolLoop({ provider: answered, registry: registry(), messages: finishing, output: { schema: city } }));
    expect(turnStarts(b.values)).toEqual(['0', '1 answer']);
    expect([loopEndOf(b.values).reason, loopEndOf(b.values).output]).toEqual(['terminated', { city: 'Oslo', celsius: 4 }]);
  });

  it('J2: without output nothing changes: no answer turn, no output key, no output in any input', () => {
    const provider = scriptedProvider([toolTurn(call('weather')), answerTurn('not JSON')]);
    const { values } = collectSync(runEventedToolLoop({ provider, registry: registry(), messages: ask(), maxTurns: 1 }));
    expect(provider.inputs.map((input) => 'output' in input)).toEqual([false]);
    expect(only(values, 'turn_start').every((e) => !('answer' in e))).toBe(true);
    expect('output' in loopEndOf(values)).toBe(false);
  });
});

/** examples/human-approval.ts, driven as a UI would drive it: dialogs out, decisions in, in virtual time. */
import { Subject, filter, map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { AgentAction, approvalGate, agentEpic } from '../../examples/human-approval.js';
import { LoopEvent, ToolRegistry, runEventedToolLoop, scriptedProvider } from '../../src/index.js';
import { call, end, marbleProvider, marbleTools, start, text } from '../../src/testing/index.js';
import { answerTurn, only, tool, toolTurn } from '../support/events.js';

const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('examples/human-approval', () => {
  it('only the calls that need approval wait; an approval for this request runs the call, a stale one is ignored', () => {
    const dialogs: string[] = [];
    testScheduler().run(({ cold, hot, expectObservable }) => {
      const events = { s: start, a: call('deploy', {}, 'call_1'), b: call('status', {}, 'call_2'), u: end('toolUse'), t: text('done'), e: end('stop') };
      // the UI: a stale decision for an earlier request (approval-0 never existed here) at frame 6, the real one at 9
      const decisions$ = hot('------x--y', {
        x: { requestId: 'approval-0', approve: false, reason: 'stale' },
        y: { requestId: 'approval-1', approve: true },
      });
      const gate = approvalGate(decisions$, (toolCall) => toolCall.name === 'deploy');
      gate.dialogs$.subscribe((dialog) => dialogs.push(dialog.type === 'open' ? `open ${dialog.request.id} ${dialog.request.call.name}` : `close ${dialog.requestId}`));
      const run = runEventedToolLoop({
        provider: marbleProvider(cold('-s-a-b-u|', events), cold('-s-t-e|', events)),
        registry: marbleTools({ deploy: 'deployed', status: 'green' }),
        messages: [{ role: 'user', content: 'deploy' }],
        beforeToolCall: gate.beforeToolCall,
      });
      const lines = run.pipe(
        filter((event: LoopEvent) => event.type === 'tool_start' || event.type === 'tool_result'),
        map((event) => (event.type === 'tool_start' ? `start ${event.call.name}` : `result ${event.message.content}`)),
      );
      // status runs at its call (frame 5); deploy only when approved (frame 9)
      expectObservable(lines).toBe('-----(xy)(zw)--|', { x: 'start status', y: 'result green', z: 'start deploy', w: 'result deployed' });
    });
    expect(dialogs).toEqual(['open approval-1 deploy', 'close approval-1']);
  });

  it('the same call id in a later turn is a new request: the decision for the earlier one does not approve it', () => {
    const decisions = new Subject<{ requestId: string; approve: boolean; reason?: string }>();
    const gate = approvalGate(decisions, () => true);
    const opened: string[] = [];
    gate.dialogs$.subscribe((dialog) => {
      if (dialog.type !== 'open') return;
      opened.push(dialog.request.id);
      // the person approves the first request, and their click is replayed when the second one opens
      decisions.next({ requestId: 'approval-1', approve: true });
      if (dialog.request.id === 'approval-2') decisions.next({ requestId: 'approval-2', approve: false, reason: 'not twice' });
    });
    const registry = new ToolRegistry().register(tool('deploy', () => 'deployed'));
    const provider = scriptedProvider([toolTurn(call('deploy', {}, 'call_1')), toolTurn(call('deploy', {}, 'call_1')), answerTurn('done')]);
    const results: string[] = [];
    runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'deploy twice' }], beforeToolCall: gate.beforeToolCall }).subscribe((event) => {
      if (event.type === 'tool_result') results.push(event.message.content);
    });
    expect(opened).toEqual(['approval-1', 'approval-2']);
    expect(results).toEqual(['deployed', 'denied: not twice']);
  });

  it('the epic: a prompt runs the loop, the dialog goes out as an action, a decision action lets the call run; a new prompt closes a pending dialog', () => {
    const actions = new Subject<AgentAction>();
    const out: AgentAction[] = [];
    const provider = scriptedProvider([toolTurn(call('deploy', {}, 'c1')), answerTurn('Deployed.'), toolTurn(call('deploy', {}, 'c2')), answerTurn('unused')]);
    const registry = new ToolRegistry().register(tool('deploy', () => 'deployed'));
    agentEpic(actions, { provider, registry, needsApproval: (toolCall) => toolCall.name === 'deploy' }).subscribe((action) => out.push(action));
    const types = () => out.map((action) => (action.type === 'agent/event' ? action.event.type : action.type));

    actions.next({ type: 'agent/prompt', text: 'deploy' });
    expect(types()).toContain('approval/open');
    expect(types()).not.toContain('tool_start');
    actions.next({ type: 'approval/decided', decision: { requestId: 'approval-1', approve: true } });
    const ends = only(out.flatMap((action) => (action.type === 'agent/event' ? [action.event] : [])), 'loop_end');
    expect(ends.map((event) => event.assistant.content)).toEqual(['Deployed.']);

    out.length = 0;
    actions.next({ type: 'agent/prompt', text: 'deploy again' });
    actions.next({ type: 'agent/prompt', text: 'never mind' }); // switchMap: the pending approval is cancelled
    expect(out.filter((action) => action.type.startsWith('approval/'))).toEqual([
      { type: 'approval/open', request: { id: 'approval-2', call: { id: 'c2', name: 'deploy', input: {} }, turn: 1 } },
      { type: 'approval/close', requestId: 'approval-2' },
    ]);
  });
});

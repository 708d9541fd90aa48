/** What the measurement needs of a deployment: a call through an ingress that waits for its answer (D5's one node, D7's cluster). */
export interface Ingress {
  call<T>(object: string, key: string, handler: string, body: unknown): Promise<T>;
}

/** What D5 measured on one Restate node, and D7 on three. */
export interface Figures {
  conversations: number;
  concurrency: number;
  conversationsPerSecond: number;
  /** Milliseconds per `ask` of `turns` turns, durable (`chat`) and without journaling (`plain`), one at a time. */
  durableMsPerAsk: number;
  plainMsPerAsk: number;
  turns: number;
  /** (durable − plain) / turns: what journaling a turn (its model call and its tool) costs. */
  journalingMsPerTurn: number;
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

/**
 * D5: `conversations` new conversations of two turns each (a tool call, then the answer), `concurrency` at a
 * time, through the ingress and back; then `samples` asks of `turns` turns one after another on `chat` and on
 * `plain`, the same loop without journaling, for the per-turn cost of journaling. `tag` keeps the runs' keys apart.
 */
export async function measure(stack: Ingress, options: { conversations: number; concurrency: number; samples: number; turns: number; tag: string }): Promise<Figures> {
  const { conversations, concurrency, samples, turns, tag } = options;
  let next = 0;
  const lane = async () => {
    while (next < conversations) {
      const n = next++;
      await stack.call('chat', `${tag}-tp-${n}`, 'ask', `t${n}: fast`);
    }
  };
  const total = await timed(() => Promise.all(Array.from({ length: concurrency }, lane)));
  const plan = `m: ${Array.from({ length: turns - 1 }, () => 'fast').join(',')}`;
  const perAsk = async (object: string) => {
    await stack.call(object, `${tag}-warm`, 'ask', plan);
    let sum = 0;
    for (let n = 0; n < samples; n++) sum += await timed(() => stack.call(object, `${tag}-${object}-${n}`, 'ask', plan));
    return sum / samples;
  };
  const plainMsPerAsk = await perAsk('plain');
  const durableMsPerAsk = await perAsk('chat');
  return {
    conversations,
    concurrency,
    conversationsPerSecond: conversations / (total / 1000),
    durableMsPerAsk,
    plainMsPerAsk,
    turns,
    journalingMsPerTurn: (durableMsPerAsk - plainMsPerAsk) / turns,
  };
}

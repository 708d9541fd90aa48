/**
 * D5: measures one Restate node on this machine — conversations per second through the ingress, and what
 * journaling costs per turn (the same loop with and without `durableLoop`, in the same kind of handler) — with
 * the specs' own stack (spec/restate/support: model server, Restate node, endpoint, all on 127.0.0.1, all stopped
 * at the end). `npm run restate-scale -- [conversations] [concurrency] [oldest|newest]` (the SDK of the endpoint,
 * D6: the oldest the peer range admits, by default, or the newest 1.x on Node 22); then D9: the journal's bytes and
 * entries per turn, and the journaling time per turn, with text merged (D1) and with one entry per delta, for replies
 * of 50 and 200 text deltas. docs/scale-out.md quotes its output.
 */
import { cpus } from 'node:os';
import { journalSize } from '../spec/restate/support/journal-size.js';
import { measure } from '../spec/restate/support/measure.js';
import { SDKS } from '../spec/restate/support/sdks.js';
import { Stack } from '../spec/restate/support/stack.js';

async function main(): Promise<void> {
  const conversations = Number(process.argv[2] ?? 300);
  const concurrency = Number(process.argv[3] ?? 16);
  const label = process.argv[4] ?? 'oldest';
  if (label !== 'oldest' && label !== 'newest') throw new TypeError(`restate-scale: the SDK is oldest or newest (got ${label})`);
  const sdk = SDKS[label];
  const stack = await Stack.start(0, sdk);
  try {
    const figures = await measure(stack, { conversations, concurrency, samples: 20, turns: 8, tag: 'scale' });
    console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.versions.node}`);
    console.log(`endpoint: @restatedev/restate-sdk ${sdk.version} on ${sdk.node === process.execPath ? 'the same Node' : 'Node 22'}`);
    console.log(`${figures.conversations} conversations of 2 turns, ${figures.concurrency} at a time: ${figures.conversationsPerSecond.toFixed(1)} conversations/s`);
    console.log(`one ask of ${figures.turns} turns, one at a time: ${figures.durableMsPerAsk.toFixed(1)} ms durable, ${figures.plainMsPerAsk.toFixed(1)} ms without journaling`);
    console.log(`journaling: ${figures.journalingMsPerTurn.toFixed(2)} ms per turn (one model call and one tool call journaled)`);
    for (const words of [50, 200]) {
      const size = await journalSize(stack, { words, turns: 4, samples: 10, tag: `d9-${words}` });
      for (const [way, of] of [['text merged (D1)', size.merged], ['one entry per delta', size.perDelta]] as const) {
        console.log(
          `D9, ${words} text deltas a reply, ${way}: ${of.bytesPerTurn.toFixed(0)} bytes and ${of.entriesPerTurn} entries per turn; ` +
            `${of.msPerTurn!.toFixed(1)} ms per turn, ${of.journalingMsPerTurn!.toFixed(1)} ms of it journaling`,
        );
      }
    }
  } finally {
    await stack.stop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

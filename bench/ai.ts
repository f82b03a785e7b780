/**
 * Ask AI: the service's own share of a call's latency (authentication, the key read, decryption, the SDK, the
 * HTTP round trip) over HTTP on the local stack, against the fake providers, which answer at once. The first call
 * of a provider in a process loads its SDK and decrypts the key; later calls reuse both (60 s key cache).
 */
import { randomUUID } from 'node:crypto';
import { FakeAiProviders, fakeBaseUrlEnvironment } from '../test/support/fake-ai-providers';
import { median, percentile, startBenchStack } from './harness';

const RUNS = 30;
const MODELS = { openai: 'gpt-4o', anthropic: 'claude-sonnet-4-6', gemini: 'gemini-2.0-flash' } as const;

export async function run(): Promise<void> {
  const fake = await FakeAiProviders.start();
  // Before the stack starts: the handlers read their settings once, when they load.
  Object.assign(process.env, fakeBaseUrlEnvironment(fake.url));
  const bench = await startBenchStack();
  try {
    const { headers } = await bench.newApiKey();
    const aiModelApiKey = Object.keys(MODELS).map((provider) => ({
      provider,
      customerApiKey: `sk-bench-${randomUUID()}`,
    }));
    const updated = await bench.post('/v2/workspace/apikeyconfig/update', { aiModelApiKey }, headers);
    if (updated.status !== 200) throw new Error(`key update failed: ${JSON.stringify(updated.body)}`);
    const ask = (model: string) =>
      bench.post('/v2/rewriter/ask-ai', { model, prompt: 'Rewrite politely.', text: 'Send it now.' }, headers);

    console.log(
      `\nAsk AI against providers that answer at once (the service's own latency; ${RUNS} warm calls each)\n`,
    );
    console.log(
      '| provider | first call ms (SDK load + decrypt) | warm median ms | warm p95 ms | read capacity per call | DynamoDB calls |',
    );
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const [provider, model] of Object.entries(MODELS)) {
      const first = await bench.meter.measure(() => ask(model));
      if (first.value.body.result?.success !== true)
        throw new Error(`ask-ai failed: ${JSON.stringify(first.value.body)}`);
      const warm = [];
      for (let i = 0; i < RUNS; i += 1) warm.push(await bench.meter.measure(() => ask(model)));
      const ms = warm.map((sample) => sample.ms);
      console.log(
        `| ${provider} | ${first.ms.toFixed(0)} | ${median(ms).toFixed(1)} | ${percentile(ms, 95).toFixed(1)} | ` +
          `${median(warm.map((s) => s.capacity.read)).toFixed(1)} | ${median(warm.map((s) => s.capacity.calls))} |`,
      );
    }
  } finally {
    await bench.stack.stop();
    await fake.stop();
  }
}

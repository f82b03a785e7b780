/**
 * The live metrics stay quiet where nothing reads them: the local stack and the tests set POWERTOOLS_METRICS_DISABLED
 * (as they quiet the logger), and a live invocation then writes no embedded-metric-format line, while counting as
 * usual. test/connected/live-metrics.test.ts turns them on and reads them.
 */
import { LIVE_METRICS, countLive, countRefusal, withLiveMetrics } from '../../shared/core/metrics';
import { captureOutput } from '../support/capture-output';

/** What `work` writes to stdout and stderr, the logger left silent as the tests keep it. */
const outputOf = (work: () => Promise<unknown>) => captureOutput(work, { logLevel: 'SILENT' });

describe('live metrics in the tests and on the local stack', () => {
  it('are disabled by the test environment, as the local stack disables them', () => {
    expect(process.env.POWERTOOLS_METRICS_DISABLED).toBe('true');
  });

  it('write nothing for an invocation that counted frames, posts, a refusal and a failure', async () => {
    const output = await outputOf(() =>
      withLiveMetrics('$default', async () => {
        countLive(LIVE_METRICS.framesIn);
        countLive(LIVE_METRICS.posts, 3);
        countRefusal('malformed');
        countLive(LIVE_METRICS.failures);
      }),
    );

    expect(output).toBe('');
  });

  it('drop a count made outside a live invocation (a REST relay, a worker) without failing', () => {
    expect(() => countLive(LIVE_METRICS.posts)).not.toThrow();
    expect(() => countRefusal('access')).not.toThrow();
  });

  it('rethrow what the invocation threw, after publishing its counts', async () => {
    const failing = withLiveMetrics('$default', async () => {
      throw new Error('storage failed');
    });

    await expect(failing).rejects.toThrow('storage failed');
  });
});

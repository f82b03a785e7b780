/**
 * The live metrics stay quiet where nothing reads them: the local stack and the tests set POWERTOOLS_METRICS_DISABLED
 * (as they quiet the logger), and a live invocation then writes no embedded-metric-format line, while counting as
 * usual. test/connected/live-metrics.test.ts turns them on and reads them.
 */
import { LIVE_METRICS, countLive, countRefusal, withLiveMetrics } from '../../shared/core/metrics';

async function outputOf(work: () => Promise<unknown>): Promise<string> {
  const lines: string[] = [];
  const capture = (chunk: unknown) => {
    lines.push(String(chunk));
    return true;
  };
  const stdout = jest.spyOn(process.stdout, 'write').mockImplementation(capture);
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    await work();
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
  return lines.join('');
}

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

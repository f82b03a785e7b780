/**
 * Which request or job a log line belongs to (shared/core/logger.ts): the local stack runs requests and worker jobs
 * side by side in one process, so each line must carry the keys of its own request or job and no other's. Two
 * requests go through the real middleware stack and are made to interleave (each waits for a step of the other),
 * and a worker job runs while both are half-way.
 */
import type { SQSEvent } from 'aws-lambda';
import * as z from 'zod/mini';
import { handler as deliveryWorker } from '../../functions/workers/delivery';
import { logger } from '../../shared/core/logger';
import { operation } from '../../shared/http/operation';
import { messageOnly } from '../../shared/http/results';
import { deliveryQueueWorker } from '../../shared/workers';
import { captureOutput } from '../support/capture-output';
import { newTenant, type Tenant } from '../support/fixtures';
import { invoke } from '../support/invoke';

const FIRST_PATH = '/v2/notifications/config/get';
const SECOND_PATH = '/v2/users/get';

interface LogLine {
  message: string;
  requestId?: string;
  path?: string;
  apiKey?: string;
  worker?: string;
  messageId?: string;
}

/** A step one side waits for and the other announces. */
function step(): { done: () => void; reached: Promise<void> } {
  let done!: () => void;
  const reached = new Promise<void>((resolve) => {
    done = resolve;
  });
  return { done, reached };
}

/** A handler for an API-key route that logs, then waits for `resume`, then logs again. */
function loggingHandler(name: string, started: { done: () => void }, resume: Promise<void>) {
  return operation({
    auth: 'apiKey',
    schema: z.object({}),
    result: messageOnly(),
    handle: async () => {
      logger.info(`${name} started`);
      started.done();
      await resume;
      logger.info(`${name} resumed`);
      return { message: 'Done.' };
    },
  });
}

function parseLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

describe('log lines of concurrent requests and jobs', () => {
  let firstTenant: Tenant;
  let secondTenant: Tenant;

  beforeAll(async () => {
    [firstTenant, secondTenant] = await Promise.all([newTenant(), newTenant()]);
  });

  it('carry their own request id, path and API key, and a worker job carries none of a request', async () => {
    const firstStarted = step();
    const secondStarted = step();
    const jobDone = step();
    // The first request resumes only once the second has started (its keys set) and the job has run.
    const first = loggingHandler(
      'first',
      firstStarted,
      Promise.all([secondStarted.reached, jobDone.reached]).then(() => undefined),
    );
    // The second starts only once the first has started, and resumes once the job has run.
    const second = loggingHandler('second', secondStarted, jobDone.reached);
    const job = { Records: [{ messageId: 'job-1', body: 'not a job' }] } as SQSEvent;
    let answers: Awaited<ReturnType<typeof invoke>>[] = [];

    const output = await captureOutput(async () => {
      const requests = Promise.all([
        invoke(first, FIRST_PATH, {}, { headers: firstTenant.apiKeyHeaders, contract: false }),
        firstStarted.reached.then(() =>
          invoke(second, SECOND_PATH, {}, { headers: secondTenant.apiKeyHeaders, contract: false }),
        ),
      ]);
      await secondStarted.reached;
      await deliveryWorker(job);
      jobDone.done();
      answers = await requests;
      logger.info('after the requests');
    });

    const lines = parseLines(output);
    const [firstId, secondId] = answers.map((answer) => answer.headers['x-request-id']);
    const firstKeys = { requestId: firstId, path: FIRST_PATH, apiKey: firstTenant.apiKeyId };
    const secondKeys = { requestId: secondId, path: SECOND_PATH, apiKey: secondTenant.apiKeyId };
    const keysOf = (line: LogLine | undefined) => ({
      requestId: line?.requestId,
      path: line?.path,
      apiKey: line?.apiKey,
    });
    const line = (message: string) => lines.filter((each) => each.message === message);
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200]);
    expect(firstId).not.toBe(secondId);
    expect(line('first started').map(keysOf)).toEqual([firstKeys]);
    expect(line('first resumed').map(keysOf)).toEqual([firstKeys]);
    expect(line('second started').map(keysOf)).toEqual([secondKeys]);
    expect(line('second resumed').map(keysOf)).toEqual([secondKeys]);
    expect(line('request completed').map(keysOf)).toEqual(expect.arrayContaining([firstKeys, secondKeys]));
    expect(line('request completed')).toHaveLength(2);
    const [jobLine] = line('Delivery job failed; the queue will hand it out again.');
    expect(jobLine).toMatchObject({ worker: deliveryQueueWorker.id, messageId: 'job-1' });
    expect(keysOf(jobLine)).toEqual({ requestId: undefined, path: undefined, apiKey: undefined });
    // A request's keys end with it.
    expect(line('after the requests').map(keysOf)).toEqual([
      { requestId: undefined, path: undefined, apiKey: undefined },
    ]);
  });
});

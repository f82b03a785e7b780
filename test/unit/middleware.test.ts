/**
 * The shared middleware stack (shared/http/middleware.ts) on requests it answers before any handler reads or writes
 * storage: the envelope, validation, the number check, the error mapper and the route's auth level. No I/O; the
 * cases that read or write the table are in test/connected/middleware.test.ts.
 */
import { handler as createWorkspace } from '../../functions/workspace/create';
import { messageOnly } from '../../shared/http/results';
import { operation } from '../../shared/http/operation';
import { ResourceExhaustedError } from '../../shared/core/errors';
import * as z from 'zod/mini';
import { invoke } from '../support/invoke';

const PATH = '/v2/workspace/create';
const raw = (rawBody: string, headers: Record<string, string> = {}) =>
  invoke(createWorkspace, PATH, undefined, { rawBody, headers });

/** A handler for PATH's auth level that fails with an error named as the AWS SDK names its errors. */
const failingWith = (name: string, message: string) =>
  operation({
    auth: 'none',
    schema: z.object({}),
    result: messageOnly(),
    handle: async () => {
      const error = new Error(message);
      error.name = name;
      throw error;
    },
  });

describe('the shared middleware stack', () => {
  it.each([
    ['a body that is not JSON', '{"data": {'],
    ['a body without data', '{}'],
    ['data that is an array', '{"data": []}'],
    ['data that is a string', '{"data": "x"}'],
    ['data that is null', '{"data": null}'],
    ['a JSON array body', '[{"data": {}}]'],
    ['an empty body', ''],
  ])('rejects %s with INVALID_ARGUMENT and a message', async (_, body) => {
    const response = await raw(body);

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
    expect(response.body.error?.message).toMatch(/data/);
  });

  it('lists every failing field in details.issues', async () => {
    const response = await invoke(createWorkspace, PATH, { ownerEmail: 7, name: '', workspaceName: 'w'.repeat(300) });

    expect(response.body.error?.details.issues.map((issue: { path: string }) => issue.path).sort()).toEqual([
      'data.name',
      'data.ownerEmail',
      'data.workspaceName',
    ]);
  });

  it('turns an unexpected error into INTERNAL without its message, stack or any secret', async () => {
    const failing = failingWith(
      'ResourceNotFoundException',
      'Requested resource not found: Table: prod-secret-table AKIAIOSFODNN7EXAMPLE',
    );

    const response = await invoke(failing, PATH, {});

    expect(response.statusCode).toBe(500);
    expect(response.body).toEqual({ error: { status: 'INTERNAL', message: 'Internal error.' } });
  });

  it('maps storage throttling to UNAVAILABLE with Retry-After', async () => {
    const throttled = failingWith(
      'ProvisionedThroughputExceededException',
      'Rate of requests exceeds the allowed throughput.',
    );

    const response = await invoke(throttled, PATH, {});

    expect(response.statusCode).toBe(503);
    expect(response.body.error?.status).toBe('UNAVAILABLE');
    expect(response.headers['Retry-After']).toBe('1');
  });

  it('maps a service error to its status and headers', async () => {
    const limited = operation({
      auth: 'none',
      schema: z.object({}),
      result: messageOnly(),
      handle: async () => {
        throw new ResourceExhaustedError('Slow down.', 12);
      },
    });

    const response = await invoke(limited, PATH, {});

    expect(response.statusCode).toBe(429);
    expect(response.headers['Retry-After']).toBe('12');
    expect(response.body.error).toEqual({ status: 'RESOURCE_EXHAUSTED', message: 'Slow down.' });
  });

  it('sends no Retry-After with a limit that waiting does not lift', async () => {
    const atLimit = operation({
      auth: 'none',
      schema: z.object({}),
      result: messageOnly(),
      handle: async () => {
        throw new ResourceExhaustedError('At most 5.');
      },
    });

    const response = await invoke(atLimit, PATH, {});

    expect(response.statusCode).toBe(429);
    expect(response.headers).not.toHaveProperty('Retry-After');
    expect(response.body.error).toEqual({ status: 'RESOURCE_EXHAUSTED', message: 'At most 5.' });
  });

  it('answers INTERNAL when a handler serves a path whose route has another auth level', async () => {
    const misrouted = operation({
      auth: 'none',
      schema: z.object({}),
      result: messageOnly(),
      handle: async () => ({ message: 'never' }),
    });

    const response = await invoke(misrouted, '/v2/workspace/apikeys/get', {});

    expect(response.statusCode).toBe(500);
    expect(response.body.error?.message).toBe('Internal error.');
  });
});

// Other numbers are valid JSON and are kept (free-form JSON is stored as a JSON string); number fields stored as
// DynamoDB numbers state their range (test/connected/contract-conformance.test.ts sends any number in unknown keys).
describe('numbers too large for a double', () => {
  it.each([
    ['at the top', '{"data":{"ownerEmail":"a@example.com","x":1e400}}', 'data.x'],
    ['deep inside', '{"data":{"ownerEmail":"a@example.com","x":{"deep":[1, -1e400]}}}', 'data.x.deep.1'],
  ])('answers INVALID_ARGUMENT for an infinite number %s, naming its path', async (_, body, path) => {
    const response = await raw(body);

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.details.issues).toEqual([{ path, message: expect.stringContaining('finite') }]);
  });
});

/**
 * The live path's metrics (shared/core/metrics.ts) as the live functions write them: one embedded-metric-format
 * object per invocation on stdout, with the frames in, posts, gone connections, failures and relay failures it
 * counted and its duration, and one per refusal reason. Turned on for this file only (test/support/live-metrics.ts,
 * imported first); the handlers run as in live-handlers.test.ts, against DynamoDB Local with a recording Management API.
 */
import { captureMetrics, metricSum, type EmfObject } from '../support/live-metrics';
import * as Y from 'yjs';
import { handler as addUsers } from '../../functions/users/add';
import { handler as addDocuments } from '../../functions/documents/add';
import { handler as authorizeHandler } from '../../functions/crdt/live-authorize';
import { LIVE_METRICS } from '../../shared/core/metrics';
import { encodeFrames } from '../../shared/domain/live/framing';
import { updateMessage } from '../../shared/domain/live/protocol';
import type { SocketRouteKey } from '../../shared/routes';
import { withFault } from '../support/faults';
import { callSocket, failing, gone } from '../support/live-harness';
import { newTenant } from '../support/fixtures';
import { uniqueId } from '../support/ids';
import { invoke } from '../support/invoke';

async function openRoom() {
  const tenant = await newTenant();
  const ids = { organizationId: uniqueId('org'), documentId: uniqueId('doc'), editorId: 'body' };
  await invoke(
    addUsers,
    '/v2/users/add',
    {
      organizationId: ids.organizationId,
      createOrganization: true,
      users: [
        { userId: 'ann', name: 'Ann', accessRole: 'editor' },
        { userId: 'bob', name: 'Bob', accessRole: 'editor' },
      ],
    },
    { headers: tenant.apiKeyHeaders },
  );
  await invoke(
    addDocuments,
    '/v2/organizations/documents/add',
    { organizationId: ids.organizationId, documents: [{ documentId: ids.documentId, documentName: 'Live' }] },
    { headers: tenant.apiKeyHeaders },
  );
  const open = async (userId: string) => {
    const connectionId = uniqueId('conn');
    const { token } = (
      await invoke(
        authorizeHandler,
        '/v2/crdt/live/authorize',
        { ...ids, userId, type: 'text' },
        { headers: tenant.apiKeyHeaders },
      )
    ).body.result?.data as { token: string };
    // Captured to keep this file's output clean: only the acts' metrics are asserted.
    const { outcome } = await captureMetrics(() =>
      callSocket('$connect', connectionId, { query: { token, encoding: 'base64' } }),
    );
    expect(outcome).toEqual({ status: 'fulfilled', value: { statusCode: 200 } });
    return connectionId;
  };
  return { open };
}

/** One update message in one base64 frame. */
function edit(text: string): string {
  const doc = new Y.Doc();
  doc.getText('content').insert(0, text);
  return encodeFrames(updateMessage(Y.encodeStateAsUpdate(doc)), uniqueId('m').slice(-8))[0];
}

/** The counts of the `$default` object, by metric name. */
function countsOf(emitted: readonly EmfObject[], route: SocketRouteKey) {
  const sum = (metric: string) => metricSum(emitted, metric, { route });
  return {
    framesIn: sum(LIVE_METRICS.framesIn),
    posts: sum(LIVE_METRICS.posts),
    gone: sum(LIVE_METRICS.goneConnections),
    failures: sum(LIVE_METRICS.failures),
    relayFailures: sum(LIVE_METRICS.relayFailures),
  };
}

afterEach(() => {
  gone.clear();
  failing.clear();
});

describe('live metrics', () => {
  it('counts a relayed update: one frame in, one post (to the other member), no failure, in one object for the invocation', async () => {
    const { open } = await openRoom();
    const ann = await open('ann');
    await open('bob');

    const { emitted, outcome } = await captureMetrics(() => callSocket('$default', ann, { body: edit('relayed') }));

    expect(outcome).toEqual({ status: 'fulfilled', value: { statusCode: 200 } });
    expect(emitted).toHaveLength(1);
    expect(countsOf(emitted, '$default')).toEqual({ framesIn: 1, posts: 1, gone: 0, failures: 0, relayFailures: 0 });
    const [object] = emitted;
    expect(object._aws.CloudWatchMetrics).toEqual([
      expect.objectContaining({ Namespace: 'collab-backend/test', Dimensions: [['service', 'route']] }),
    ]);
    expect(object.service).toBe('collab-backend');
    expect(object[LIVE_METRICS.handlerTime]).toEqual(expect.any(Number));
  });

  it('counts a refused connection by reason class (never by id), at $connect', async () => {
    const connectionId = uniqueId('conn');

    const { emitted } = await captureMetrics(() =>
      callSocket('$connect', connectionId, { query: { token: 'not-a-token', encoding: 'base64' } }),
    );

    const refusals = emitted.filter((object) => LIVE_METRICS.refusals in object);
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ route: '$connect', reason: 'token', [LIVE_METRICS.refusals]: 1 });
    expect(refusals[0]._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service', 'route', 'reason']]);
    expect(countsOf(emitted, '$connect')).toEqual({ framesIn: 0, posts: 0, gone: 0, failures: 0, relayFailures: 0 });
  });

  it('counts a connection closed for a frame that is not a protocol message as a malformed refusal, at $default, not as a failure', async () => {
    const { open } = await openRoom();
    const ann = await open('ann');

    const { emitted, outcome } = await captureMetrics(() => callSocket('$default', ann, { body: '~bad' }));

    expect(outcome).toEqual({ status: 'fulfilled', value: { statusCode: 200 } });
    expect(metricSum(emitted, LIVE_METRICS.refusals, { route: '$default', reason: 'malformed' })).toBe(1);
    expect(countsOf(emitted, '$default')).toEqual({ framesIn: 1, posts: 1, gone: 0, failures: 0, relayFailures: 0 });
  });

  it('counts a failure when an update cannot be stored, and relays nothing', async () => {
    const { open } = await openRoom();
    const ann = await open('ann');
    await open('bob');

    const { emitted, outcome } = await captureMetrics(() =>
      withFault({ command: 'TransactWriteItems', nth: 1 }, () => callSocket('$default', ann, { body: edit('lost?') })),
    );

    expect(outcome.status).toBe('rejected');
    expect(countsOf(emitted, '$default')).toEqual({ framesIn: 1, posts: 0, gone: 0, failures: 1, relayFailures: 0 });
  });

  it('counts a recipient found gone and one the relay could not reach', async () => {
    const { open } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');
    const cyd = await open('bob');
    await open('bob');
    gone.add(bob);
    failing.add(cyd);

    const { emitted, outcome } = await captureMetrics(() =>
      callSocket('$default', ann, { body: edit('partly relayed') }),
    );

    expect(outcome.status).toBe('rejected');
    expect(countsOf(emitted, '$default')).toEqual({ framesIn: 1, posts: 1, gone: 1, failures: 1, relayFailures: 1 });
  });

  it('puts no id in any dimension: only service, route and reason', async () => {
    const { open } = await openRoom();
    const ann = await open('ann');

    const { emitted } = await captureMetrics(async () => {
      await callSocket('$default', ann, { body: edit('one') });
      await callSocket('$connect', uniqueId('conn'), { query: { encoding: 'base64' } });
      await callSocket('$disconnect', ann);
    });

    const names = new Set(
      emitted.flatMap((object) => object._aws.CloudWatchMetrics.flatMap((directive) => directive.Dimensions.flat())),
    );
    expect(emitted.length).toBeGreaterThanOrEqual(4);
    expect([...names].sort()).toEqual(['reason', 'route', 'service']);
  });
});

/**
 * Document migration over HTTP against the local stack: the stack's stream poller wakes the worker, so a
 * migration started over HTTP completes while nothing else is called.
 */
import { readDocument, seedDocument } from '../support/document-seed';
import { newApiKeyHeaders, post } from '../support/http';
import { uniqueId } from '../support/ids';
import { eventually } from '../support/wait';

const call = async (path: string, data: unknown, headers: Record<string, string>) => {
  const reply = await post(path, data, headers);
  return { statusCode: reply.status, body: reply.body };
};

describe('document migration over HTTP', () => {
  it('moves a document with everything of it while nobody calls, and refuses writes meanwhile', async () => {
    const headers = await newApiKeyHeaders();
    const organizationId = uniqueId('org');
    await seedDocument(call, headers, organizationId, 'draft');
    const before = await readDocument(call, headers, organizationId, 'draft');

    const started = await post(
      '/v2/organizations/documents/migrate',
      { organizationId, documentId: 'draft', newDocumentId: 'final' },
      headers,
    );
    const refused = await post(
      '/v2/crdt/add',
      { organizationId, documentId: 'final', editorId: 'late', type: 'text', data: 'x' },
      headers,
    );
    const migrationId = started.body.result.data.migrationId;
    // Nothing but the status is called while the worker runs: the stream wakes it. The status operation only reads
    // (its grants are read-only, which the stack's grant check enforces), so asking it cannot move the migration on.
    const status = await eventually(
      () => post('/v2/organizations/documents/migrate/status', { organizationId, migrationId }, headers),
      (reply) => ['completed', 'failed'].includes(reply.body.result?.data.status),
      { intervalMs: 250, what: 'the migration to finish' },
    );

    expect(started.status).toBe(200);
    expect(refused.status).toBe(400);
    expect(refused.body.error.status).toBe('FAILED_PRECONDITION');
    expect(status.body.result.data).toEqual({ migrationId, status: 'completed' });
    expect(await readDocument(call, headers, organizationId, 'final')).toEqual(before);
    expect((await readDocument(call, headers, organizationId, 'draft')).document).toEqual([]);
  });
});

/**
 * Versions of an editor over HTTP against the local stack (decisions §14): keep one, change the editor, list, read
 * the old content, restore it (the content before kept as a restore version), delete; an unknown version refused.
 */
import { newApiKeyHeaders, post } from '../support/http';
import { uniqueId } from '../support/ids';

describe('versions of an editor over HTTP', () => {
  it('creates, lists, reads, restores and deletes versions, with the documented errors', async () => {
    const headers = await newApiKeyHeaders();
    const ids = { organizationId: uniqueId('org'), documentId: 'doc#1', editorId: 'body' };

    await post('/v2/crdt/add', { ...ids, type: 'xml', format: 'markdown', content: '# Plan\n\nFirst idea.' }, headers);
    const created = await post('/v2/crdt/versions/create', { ...ids, name: 'First', userId: 'ann' }, headers);
    const versionId = created.body.result.data.versionId as string;
    await post(
      '/v2/crdt/update',
      { ...ids, format: 'markdown', content: '# Plan\n\nSecond idea.', userId: 'bob' },
      headers,
    );
    const old = await post('/v2/crdt/get', { ...ids, versionId, format: 'markdown' }, headers);
    const restored = await post('/v2/crdt/versions/restore', { ...ids, versionId, userId: 'ann' }, headers);
    const now = await post('/v2/crdt/get', { ...ids, format: 'markdown' }, headers);
    const listed = await post('/v2/crdt/versions/get', { ...ids, pageSize: 10 }, headers);
    const deleted = await post('/v2/crdt/versions/delete', { ...ids, versionId }, headers);
    const gone = await post('/v2/crdt/get', { ...ids, versionId }, headers);

    expect(created.status).toBe(200);
    expect(created.body.result).toMatchObject({
      message: 'Version created.',
      data: { editorId: 'body', kind: 'manual', name: 'First' },
    });
    expect(old.body.result.data[0].data).toBe('# Plan\n\nFirst idea.');
    expect(restored.status).toBe(200);
    expect(restored.body.result.data.restoredVersionId).toBe(versionId);
    expect(now.body.result.data[0].data).toBe('# Plan\n\nFirst idea.');
    expect(listed.body.result.data.map((v: { kind: string }) => v.kind)).toEqual(['restore', 'manual']);
    expect(listed.body.result.data[0]).toMatchObject({
      versionId: restored.body.result.data.versionId,
      authors: ['bob'],
    });
    expect(deleted.body.result).toEqual({
      status: 'success',
      message: 'Version deleted.',
      data: { versionId, deleted: true },
    });
    expect(gone.status).toBe(404);
    expect(gone.body.error).toEqual({ status: 'NOT_FOUND', message: 'Version not found.' });
  });
});

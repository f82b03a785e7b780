/** CRDT data over HTTP against the local stack: add, read as JSON and as a Yjs state, replace, merge a client update. */
import { randomBytes } from 'node:crypto';
import * as Y from 'yjs';
import { newApiKeyHeaders, post } from '../support/http';
import { uniqueId } from '../support/ids';

describe('CRDT data over HTTP', () => {
  it('adds, reads, replaces and merges an editor’s data, with the documented errors', async () => {
    const headers = await newApiKeyHeaders();
    const ids = { organizationId: uniqueId('org'), documentId: 'doc#1' };
    const big = `Title\n${randomBytes(600_000).toString('base64')}`;

    const added = await post(
      '/v2/crdt/add',
      { ...ids, editorId: 'e1', type: 'text', data: big, userId: 'u1' },
      headers,
    );
    const twice = await post('/v2/crdt/add', { ...ids, editorId: 'e1', type: 'text', data: 'again' }, headers);
    const noEditor = await post('/v2/crdt/add', { ...ids, type: 'text', data: 'x' }, headers);
    const wrongData = await post('/v2/crdt/add', { ...ids, editorId: 'e2', type: 'map', data: 'x' }, headers);
    const asYjs = await post('/v2/crdt/get', { ...ids, editorId: 'e1', format: 'yjs' }, headers);
    const client = new Y.Doc();
    Y.applyUpdate(client, Buffer.from(asYjs.body.result.data[0].state, 'base64'));
    const replaced = await post(
      '/v2/crdt/update',
      { ...ids, editorId: 'e1', type: 'text', data: 'Title\nshort text', userId: 'u2' },
      headers,
    );
    const known = Y.encodeStateVector(client);
    client.getText('content').insert(0, 'client: ');
    const merged = await post(
      '/v2/crdt/update',
      { ...ids, editorId: 'e1', yjsUpdate: Buffer.from(Y.encodeStateAsUpdate(client, known)).toString('base64') },
      headers,
    );
    const missing = await post('/v2/crdt/update', { ...ids, editorId: 'ghost', type: 'text', data: 'x' }, headers);
    const all = await post('/v2/crdt/get', ids, headers);
    const unknown = await post('/v2/crdt/get', { ...ids, editorId: 'nobody' }, headers);

    expect(added.status).toBe(200);
    expect(added.body.result).toEqual({ status: 'success', message: 'CRDT data added successfully.' });
    expect(twice.status).toBe(409);
    expect(noEditor.body.error).toEqual({ status: 'INVALID_ARGUMENT', message: 'Editor ID is required.' });
    expect(wrongData.body.error).toEqual({
      status: 'INVALID_ARGUMENT',
      message: 'Data must be an object for type map.',
    });
    expect(asYjs.body.result.data[0]).toMatchObject({
      data: big,
      id: 'e1',
      lastUpdatedBy: 'u1',
      sessionId: null,
      type: 'text',
      contentKey: 'content',
    });
    expect(client.getText('content').toString()).toBe(`client: ${big}`);
    expect(replaced.status).toBe(200);
    expect(merged.status).toBe(200);
    expect(missing.status).toBe(404);
    // The client's insert, made against the state before the replacement, stays in front of the kept title.
    expect(all.body.result.data).toEqual([
      {
        data: 'client: Title\nshort text',
        id: 'e1',
        lastUpdate: expect.any(String),
        lastUpdatedBy: null,
        sessionId: null,
      },
    ]);
    expect(unknown.body.result.data).toEqual([]);
  });
});

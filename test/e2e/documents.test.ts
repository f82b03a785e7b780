/** Documents over HTTP against the local stack: add, get, update, disable, and get again. */
import { newApiKeyHeaders as apiKeyHeaders, post } from '../support/http';
import { uniqueId } from '../support/ids';

describe('documents over HTTP', () => {
  it('adds, lists, updates and disables documents', async () => {
    const headers = await apiKeyHeaders();
    const organizationId = uniqueId('org');

    const added = await post(
      '/v2/organizations/documents/add',
      {
        organizationId,
        createOrganization: true,
        documents: [{ documentId: 'd#1', documentName: 'Plan' }, { documentId: 'd2' }],
      },
      headers,
    );
    const first = await post('/v2/organizations/documents/get', { organizationId, pageSize: 1 }, headers);
    const second = await post(
      '/v2/organizations/documents/get',
      { organizationId, pageSize: 1, pageToken: first.body.result.pageToken },
      headers,
    );
    const updated = await post(
      '/v2/organizations/documents/update',
      {
        organizationId,
        documents: [
          { documentId: 'd2', documentName: 'Notes', folderId: 'F', metadata: { team: 'a' } },
          { documentId: 'ghost' },
        ],
      },
      headers,
    );
    const disabled = await post(
      '/v1/organizations/documents/access/disablestate/update',
      { organizationId, documentIds: ['d#1'], disabled: true },
      headers,
    );
    const after = await post('/v2/organizations/documents/get', { organizationId }, headers);

    expect(added.status).toBe(200);
    expect(added.body.result.data['d#1']).toEqual({ success: true, id: 'd#1', message: 'Document added.' });
    expect(first.body.result.data).toHaveLength(1);
    expect(second.body.result.data).toHaveLength(1);
    expect(second.body.result).not.toHaveProperty('pageToken');
    expect(updated.body.result.data).toEqual({
      d2: { success: true, id: 'd2', message: 'Document updated.' },
      ghost: { success: false, id: 'ghost', message: 'Document does not exist.' },
    });
    expect(disabled.body.result.data).toEqual({
      'd#1': { success: true, disabled: true, message: 'Document disabled.' },
    });
    expect(after.body.result.data).toEqual([
      { documentId: 'd#1', documentName: 'Plan', accessType: 'organizationPrivate', disabled: true },
      {
        documentId: 'd2',
        documentName: 'Notes',
        folderId: 'F',
        accessType: 'organizationPrivate',
        disabled: false,
        metadata: { team: 'a' },
      },
    ]);
  });
});

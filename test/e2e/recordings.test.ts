/** Recordings over HTTP against the local stack: add (generated and given ids), read by document, by id, paged. */
import { newApiKeyHeaders, post } from '../support/http';
import { uniqueId } from '../support/ids';

describe('recordings over HTTP', () => {
  it('adds recording annotations and reads them back by document, organization and id, page by page', async () => {
    const headers = await newApiKeyHeaders();
    const organizationId = uniqueId('org');
    const recording = {
      annotationId: 'rec-1',
      recordingType: 'screen',
      mode: 'floating',
      recordedTime: { duration: 4000, display: '00:04' },
      displayName: 'Jane',
      attachments: [
        {
          attachmentId: 1,
          url: 'https://cdn.example.com/1.webm',
          mimeType: 'video/webm',
          name: '1.webm',
          type: 'video',
          size: 1024,
        },
      ],
      latestVersion: 1,
    };

    const added = await post(
      '/v2/recordings/add',
      { organizationId, documentId: 'doc', recordings: [recording, { displayName: 'second' }] },
      headers,
    );
    const generated = Object.keys(added.body.result.data).find((id) => id !== 'rec-1') as string;
    const first = await post('/v2/recordings/get', { organizationId, documentId: 'doc', pageSize: 1 }, headers);
    const second = await post(
      '/v2/recordings/get',
      { organizationId, documentId: 'doc', pageSize: 1, pageToken: first.body.result.pageToken },
      headers,
    );
    const named = await post('/v2/recordings/get', { organizationId, recordingIds: [generated] }, headers);
    const missingOrganization = await post('/v2/recordings/get', { documentId: 'doc' }, headers);

    expect(added.status).toBe(200);
    expect(added.body.result.data['rec-1']).toEqual({ success: true, message: 'Recording added.' });
    expect(first.body.result.data).toEqual([
      {
        ...recording,
        type: 'recorder',
        metadata: { apiKey: headers['x-service-api-key'], organizationId, documentId: 'doc' },
      },
    ]);
    expect(second.body.result.data.map((r: { annotationId: string }) => r.annotationId)).toEqual([generated]);
    expect(second.body.result).not.toHaveProperty('pageToken');
    expect(named.body.result.data[0].displayName).toBe('second');
    expect(missingOrganization.status).toBe(400);
    expect(missingOrganization.body.error.status).toBe('INVALID_ARGUMENT');
  });
});

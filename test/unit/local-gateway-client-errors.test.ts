/**
 * The local gateway's answer to a request Node could not parse, by Node's error code (the socket side is covered by
 * test/e2e/local-network.test.ts).
 */
import { clientErrorAnswer } from '../../local/gateway';

describe('clientErrorAnswer', () => {
  it('answers header overflow with 431 and the header limit in KB', () => {
    expect(clientErrorAnswer('HPE_HEADER_OVERFLOW')).toEqual({
      statusCode: 431,
      status: 'INVALID_ARGUMENT',
      message: 'Request headers are too large (limit 16 KB).',
    });
  });

  it('answers a request that did not arrive in time with 408, as Node does', () => {
    expect(clientErrorAnswer('ERR_HTTP_REQUEST_TIMEOUT').statusCode).toBe(408);
  });

  it('answers any other parse error with 400 INVALID_ARGUMENT', () => {
    expect(clientErrorAnswer('HPE_INVALID_HEADER_TOKEN')).toEqual({
      statusCode: 400,
      status: 'INVALID_ARGUMENT',
      message: 'Malformed HTTP request.',
    });
  });
});

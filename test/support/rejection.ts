/** What a promise ends in, for tests of errors with a code (ServiceError): `'accepted'`, the code, or `'other'`. */
export async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'accepted';
  } catch (error) {
    return (error as { code?: string }).code ?? 'other';
  }
}

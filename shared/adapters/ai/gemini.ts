/** Ask AI through Google's official Gen AI SDK (Gemini API, API-key auth): one generateContent request, no retries. */
import { ApiError, GoogleGenAI } from '@google/genai';
import { config } from '../../core/config';
import { ProviderCallError, errorBodyMessage, type ProviderRequest } from './provider-call';

export async function complete(request: ProviderRequest): Promise<string> {
  const client = new GoogleGenAI({
    apiKey: request.apiKey,
    httpOptions: {
      baseUrl: config.aiBaseUrls.gemini,
      timeout: request.timeoutMs,
      // One attempt: a retry would eat the 25 s budget, and a rate-limited or failing call is the caller's to retry.
      retryOptions: { attempts: 1 },
      // Node's own fetch. Without this option the SDK hands fetch a dispatcher it looks up through undici's
      // internal global, only to lift undici's 300 s timeouts, which the deadline here makes moot; that global is
      // also missing in sandboxed contexts such as jest's.
      fetch: (input, init) => fetch(input, init),
    },
  });
  try {
    const response = await client.models.generateContent({
      model: request.model,
      contents: request.user,
      config: {
        ...(request.system === undefined ? {} : { systemInstruction: request.system }),
        abortSignal: request.signal,
      },
    });
    return response.text ?? '';
  } catch (error) {
    if (error instanceof ApiError) {
      throw new ProviderCallError({ kind: 'status', status: error.status, detail: errorBodyMessage(error.message) });
    }
    // fetch reports a refused or reset connection as a TypeError ("fetch failed").
    if (error instanceof TypeError) throw new ProviderCallError({ kind: 'network' });
    throw error;
  }
}

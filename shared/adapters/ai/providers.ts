/**
 * Calls one AI provider under a deadline. Each provider's adapter (and so its SDK, 150–750 KB bundled) is loaded
 * on first use only: a function instance pays for the SDKs its tenants use, and a cold start pays for none.
 */
import { logger } from '../../core/logger';
import {
  ProviderCallError,
  type AiProvider,
  type ProviderAdapter,
  type ProviderFailure,
  type ProviderRequest,
} from './provider-call';

const ADAPTERS: Record<AiProvider, () => Promise<ProviderAdapter>> = {
  openai: () => import('./openai'),
  anthropic: () => import('./anthropic'),
  gemini: () => import('./gemini'),
};

export type ProviderOutcome = { ok: true; text: string } | { ok: false; failure: ProviderFailure };

/**
 * The model's answer, or why there is none. Never throws: past `timeoutMs` (SDK loading included) the request is
 * aborted and reported as a timeout, whatever the SDK throws on the way.
 */
export async function callProvider(
  provider: AiProvider,
  request: Omit<ProviderRequest, 'signal' | 'timeoutMs'>,
  timeoutMs: number,
): Promise<ProviderOutcome> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  try {
    const adapter = await ADAPTERS[provider]();
    const text = await adapter.complete({ ...request, signal: deadline.signal, timeoutMs });
    return text === '' ? { ok: false, failure: { kind: 'empty' } } : { ok: true, text };
  } catch (error) {
    if (deadline.signal.aborted) return { ok: false, failure: { kind: 'timeout' } };
    if (error instanceof ProviderCallError) return { ok: false, failure: error.failure };
    // The name only: an SDK's message could quote the request.
    logger.warn('AI provider call failed unexpectedly', {
      provider,
      error: error instanceof Error ? error.name : typeof error,
    });
    return { ok: false, failure: { kind: 'unexpected' } };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Owner emails: normalisation and the disposable-domain rule. The domain list comes from
 * disposable-email-domains-js, which packages the community-maintained disposable-email-domains blocklist.
 */
import { disposableEmailBlocklist } from 'disposable-email-domains-js';

/** Emails compare trimmed and lower-cased (docs/decisions.md §3). */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

let blocklist: Set<string> | undefined;

/** True when the email's domain, or a parent domain of it, is a known disposable-mail domain. */
export function isDisposableEmail(email: string): boolean {
  blocklist ??= new Set(disposableEmailBlocklist());
  const domain = normalizeEmail(email).split('@').pop() ?? '';
  const labels = domain.split('.');
  // mail.mailinator.com is as disposable as mailinator.com; stop before the bare top-level domain.
  for (let i = 0; i < labels.length - 1; i += 1) {
    if (blocklist.has(labels.slice(i).join('.'))) return true;
  }
  return false;
}

/** `jane.doe@x.io` → `Jane.doe Test API Key` (docs/decisions.md §3). */
export function defaultApiKeyName(email: string): string {
  const local = normalizeEmail(email).split('@')[0] ?? '';
  return `${local.charAt(0).toUpperCase()}${local.slice(1)} Test API Key`;
}

/**
 * Fixed RSA keys for tests of the advanced webhook configuration (docs/decisions.md §11): fixed so that recorded
 * OpenAPI examples stay the same from run to run. Public halves only; base64 DER (SubjectPublicKeyInfo).
 */

/** RSA, 2048 bits: accepted. */
export const RSA_2048_PUBLIC_KEY =
  'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA3NeXHFVUKkzNdsP6BI+hZylaG7aPlWtXz708+xJI9YNu+Y20MUhOviuupGIVTsfIvDBmmfz7mqsxZZ4mz0zET0aOUkfEeLsh3YZWAXm3aYIX6m/kw+RETPVCGb2Ok1nrM40TRTFsz3LZF7s7oh1wVST2WHDEu295H+J4c3en4XSCcR1663W0HPrf3Tzx2nPnq+bWYN8kxP5/tIOf61ZeX07HPgfjsfq6g0ASVyPYHnzLpXwxcwnU7biVmMTLL38w9Y6aJZiE/u6JXvHJDqafKDziftAHdrYLS3GaiDGtkaUt9XfOwkh3RpCdjOc+w+yDLd5WqODt3v5mqVY9fVqiZQIDAQAB';

/** RSA, 1024 bits: too small. */
export const RSA_1024_PUBLIC_KEY =
  'MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCrxjWCr9j8aZIOocUjr9gc09/d1EtZcbj1fpqUMSFawSw5XFoGQJD8cbRP62JyNd23h7HFUy+pYb5+pVvDkbPHnlpv6+lufquzDd7+/sLWN3qUQ0BjPkcCfrRQYDIBm88D/pX3Oo1JXOLs54KPxJ3Q7SJBSfp8XGLjrbn2vF2WGwIDAQAB';

/** EC P-256: not RSA. */
export const EC_PUBLIC_KEY =
  'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE54EFSqrxIAMpMcz4HJrcaMVXD+k8cOEJhqvEGZ23NoN6MGwg+5TB4Bo2m6pgNv4PpJ204taWoy3oYXTm4gLeRQ==';

/**
 * RSA_2048_PUBLIC_KEY with the lowest bit of its modulus cleared: still a well-formed 2048-bit RSA
 * SubjectPublicKeyInfo with exponent 65537 (it matches the documented pattern and parses), but no RSA key has an
 * even modulus and OpenSSL fails every encryption under it ("no inverse"). Unusable.
 */
export const RSA_EVEN_MODULUS_PUBLIC_KEY =
  'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA3NeXHFVUKkzNdsP6BI+hZylaG7aPlWtXz708+xJI9YNu+Y20MUhOviuupGIVTsfIvDBmmfz7mqsxZZ4mz0zET0aOUkfEeLsh3YZWAXm3aYIX6m/kw+RETPVCGb2Ok1nrM40TRTFsz3LZF7s7oh1wVST2WHDEu295H+J4c3en4XSCcR1663W0HPrf3Tzx2nPnq+bWYN8kxP5/tIOf61ZeX07HPgfjsfq6g0ASVyPYHnzLpXwxcwnU7biVmMTLL38w9Y6aJZiE/u6JXvHJDqafKDziftAHdrYLS3GaiDGtkaUt9XfOwkh3RpCdjOc+w+yDLd5WqODt3v5mqVY9fVqiZAIDAQAB';

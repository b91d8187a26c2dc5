import { randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, importJWK, jwtVerify, type JWK } from 'jose';
import type { SecretRepository } from '../store/ports.js';

export const ID_TOKEN_LIFETIME_SECONDS = 3600;
const ALG = 'ES256';
const ISSUER = 'scanhub';

/** The claims scanhub puts into an IdToken. */
export interface IdTokenClaims {
  sub: string;
  email: string;
  customer_id: string;
  roles: string[];
}

type KeyLike = Awaited<ReturnType<typeof importJWK>>;

/** Verified tokens remembered at most; a client logs in about once an hour. */
const VERIFIED_CACHE_SIZE = 10_000;

/** Signs and verifies the deployment's IdTokens (ES256, key pair in `keys/idtoken.jwk`). */
export class IdTokens {
  /**
   * Tokens whose signature was checked, with their claims, until they expire: checking an
   * ES256 signature costs about 0.3 ms, a noticeable part of a small request.
   */
  private readonly verified = new Map<string, { claims: Readonly<IdTokenClaims>; expiresMs: number }>();

  private constructor(
    private readonly privateKey: KeyLike,
    private readonly publicKey: KeyLike,
    private readonly publicJwk: JWK,
    private readonly clock: () => number,
  ) {}

  /** Loads the signing key (the secret `keys/idtoken.jwk`), generating it on first use. */
  static async load(secrets: SecretRepository, clock: () => number = Date.now): Promise<IdTokens> {
    const stored = await secrets.getOrCreate('keys/idtoken.jwk', async () => {
      const { privateKey: generated } = await generateKeyPair(ALG, { extractable: true });
      return JSON.stringify({ ...(await exportJWK(generated)), kid: randomUUID(), alg: ALG });
    });
    const jwk = JSON.parse(stored) as JWK;
    const { d: _private, ...publicJwk } = jwk;
    return new IdTokens(
      await importJWK(jwk, ALG),
      await importJWK(publicJwk, ALG),
      { ...publicJwk, use: 'sig' },
      clock,
    );
  }

  /** A signed IdToken for the user, valid ID_TOKEN_LIFETIME_SECONDS. */
  async sign(claims: IdTokenClaims): Promise<string> {
    const now = Math.floor(this.clock() / 1000);
    return new SignJWT({ email: claims.email, customer_id: claims.customer_id, roles: claims.roles })
      .setProtectedHeader({ alg: ALG, kid: this.publicJwk.kid, typ: 'JWT' })
      .setSubject(claims.sub)
      .setIssuer(ISSUER)
      .setIssuedAt(now)
      .setExpirationTime(now + ID_TOKEN_LIFETIME_SECONDS)
      .sign(this.privateKey);
  }

  /** The token's claims, or an Error saying why it is not acceptable. */
  async verify(token: string): Promise<Readonly<IdTokenClaims>> {
    const known = this.verified.get(token);
    // jose's rule: a token is expired once the current second reaches `exp`.
    if (known && this.clock() < known.expiresMs) return known.claims;
    if (known) this.verified.delete(token);
    const { payload } = await jwtVerify(token, this.publicKey, {
      algorithms: [ALG],
      issuer: ISSUER,
      currentDate: new Date(this.clock()),
      // A token without an expiry would be valid forever, one without `iat` cannot be dated.
      requiredClaims: ['exp', 'iat', 'sub'],
    });
    if (typeof payload.sub !== 'string' || typeof payload.customer_id !== 'string') {
      throw new Error('token lacks sub or customer_id');
    }
    const claims = Object.freeze({
      sub: payload.sub,
      email: String(payload.email ?? ''),
      customer_id: payload.customer_id,
      roles: Array.isArray(payload.roles) ? payload.roles.map(String) : [],
    });
    // Oldest first out: a Map iterates in insertion order.
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, { claims, expiresMs: payload.exp! * 1000 });
    return claims;
  }

  /** The JSON Web Key Set served at `/.well-known/jwks.json`. */
  jwks(): { keys: JWK[] } {
    return { keys: [this.publicJwk] };
  }
}

import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { SignJWT, importJWK, jwtVerify, type JWK, type JWTPayload } from 'jose';
import type { SecretRepository } from '../store/ports/index.js';
import { SIGNING_ALG, SIGNING_KEY_SECRET, newSigningKey, parseSigningKeys, publicJwkOf, serialiseSigningKeys } from './signing-keys.js';

export const ID_TOKEN_LIFETIME_SECONDS = 3600;
const ISSUER = 'scanhub';

/**
 * How stale the keys may be when a token is signed or the JWKS served: a log-in reads them again
 * once this long has passed since the last read, so an instance signs with a key that
 * `operator rotate-signing-key` added at most this long before (docs/users.md "Signing keys").
 */
export const KEY_REFRESH_MS = 1000;

/** An unknown `kid` reads the keys again, at most once per this interval (forged kids cost one read a second). */
const UNKNOWN_KID_REREAD_MS = 1000;

/**
 * How long a superseded key keeps verifying after its successor was made: the token lifetime,
 * plus room for instances that signed with it before they read the new key (KEY_REFRESH_MS) and
 * for clocks that differ between machines.
 */
export const SUPERSEDED_KEY_KEEP_MS = ID_TOKEN_LIFETIME_SECONDS * 1000 + 5 * 60_000;

/** The claims scanhub puts into an IdToken. */
export interface IdTokenClaims {
  sub: string;
  email: string;
  customer_id: string;
  roles: string[];
  /** The user's session version when the token was issued: a password set or a change of roles raises it. */
  session_version: number;
}

type KeyLike = Awaited<ReturnType<typeof importJWK>>;

/** Verified tokens remembered at most; a client logs in about once an hour. */
const VERIFIED_CACHE_SIZE = 10_000;

export interface IdTokenOptions {
  /** The deployment's public URL, the tokens' `aud` (a function: `serve` settles it after listening). */
  audience: () => string;
  clock?: () => number;
  /** KEY_REFRESH_MS and UNKNOWN_KID_REREAD_MS both (tests shorten them). */
  rereadMs?: number;
}

/**
 * Signs and verifies the deployment's IdTokens (ES256) with the keys of the secret
 * `keys/idtoken.jwk` (src/auth/signing-keys.ts): the newest signs, every one verifies.
 */
export class IdTokens {
  /**
   * Tokens whose signature was checked, with their claims, until they expire: checking an ES256
   * signature is a noticeable part of a small request (bench/README.md "events").
   */
  private readonly verified = new Map<string, { claims: Readonly<IdTokenClaims>; expiresMs: number }>();
  private publicKeys = new Map<string, KeyLike>();
  private publicJwks: JWK[] = [];
  private signing!: { kid: string; key: KeyLike };
  /** When the keys were last read (performance.now(): a test's clock must not stop the reads). */
  private readAt = -Infinity;
  private reading: Promise<void> | undefined;
  private readonly clock: () => number;
  /** Tokens without `aud` were issued before tokens carried one: accepted when issued before this moment. */
  private readonly startedMs: number;

  private readonly refreshMs: number;
  private readonly unknownKidRereadMs: number;

  private constructor(
    private readonly secrets: SecretRepository,
    private readonly audience: () => string,
    clock: () => number,
    rereadMs: number | undefined,
  ) {
    this.clock = clock;
    this.startedMs = clock();
    this.refreshMs = rereadMs ?? KEY_REFRESH_MS;
    this.unknownKidRereadMs = rereadMs ?? UNKNOWN_KID_REREAD_MS;
  }

  /** Loads the signing keys (the secret `keys/idtoken.jwk`), generating the first on first use. */
  static async load(secrets: SecretRepository, options: IdTokenOptions): Promise<IdTokens> {
    const clock = options.clock ?? Date.now;
    const tokens = new IdTokens(secrets, options.audience, clock, options.rereadMs);
    await tokens.adopt(await secrets.getOrCreate(SIGNING_KEY_SECRET, () => serialiseSigningKeys([newSigningKey(clock())])));
    return tokens;
  }

  /** A signed IdToken for the user, valid ID_TOKEN_LIFETIME_SECONDS, with the newest key. */
  async sign(claims: IdTokenClaims): Promise<string> {
    await this.fresh();
    const now = Math.floor(this.clock() / 1000);
    return new SignJWT({ email: claims.email, customer_id: claims.customer_id, roles: claims.roles, session_version: claims.session_version })
      .setProtectedHeader({ alg: SIGNING_ALG, kid: this.signing.kid, typ: 'JWT' })
      .setSubject(claims.sub)
      .setIssuer(ISSUER)
      .setAudience(this.audience())
      .setIssuedAt(now)
      .setExpirationTime(now + ID_TOKEN_LIFETIME_SECONDS)
      .sign(this.signing.key);
  }

  /** The token's claims, or an Error saying why it is not acceptable. */
  async verify(token: string): Promise<Readonly<IdTokenClaims>> {
    const known = this.verified.get(token);
    // jose's rule: a token is expired once the current second reaches `exp`.
    if (known && this.clock() < known.expiresMs) return known.claims;
    if (known) this.verified.delete(token);
    const { payload } = await jwtVerify(token, (header) => this.publicKeyOf(header.kid), {
      algorithms: [SIGNING_ALG],
      issuer: ISSUER,
      currentDate: new Date(this.clock()),
      // A token without an expiry would be valid forever, one without `iat` cannot be dated.
      requiredClaims: ['exp', 'iat', 'sub'],
    });
    this.checkAudience(payload);
    if (typeof payload.sub !== 'string' || typeof payload.customer_id !== 'string') {
      throw new Error('token lacks sub or customer_id');
    }
    const version = payload.session_version;
    const claims = Object.freeze({
      sub: payload.sub,
      email: String(payload.email ?? ''),
      customer_id: payload.customer_id,
      roles: Array.isArray(payload.roles) ? payload.roles.map(String) : [],
      // Tokens from before session versions existed hold none: the state every user started in.
      session_version: Number.isSafeInteger(version) ? (version as number) : 0,
    });
    // Oldest first out: a Map iterates in insertion order.
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, { claims, expiresMs: payload.exp! * 1000 });
    return claims;
  }

  /** The JSON Web Key Set served at `/.well-known/jwks.json`: every key that verifies. */
  async jwks(): Promise<{ keys: JWK[] }> {
    await this.fresh();
    return { keys: this.publicJwks };
  }

  /**
   * `aud` must name this deployment (RFC 7519, 4.1.3). A token without one was issued by a
   * version before tokens carried it: accepted only when issued before this process started, so
   * none made later (by a copy of the keys elsewhere) passes; such tokens expire within the hour.
   */
  private checkAudience(payload: JWTPayload): void {
    const { aud } = payload;
    if (aud === undefined) {
      // In whole seconds, as `iat`: a token of this process's first second is not "before" it.
      if (payload.iat! < Math.floor(this.startedMs / 1000)) return;
      throw new Error('token has no audience');
    }
    const audience = this.audience();
    if (aud === audience || (Array.isArray(aud) && aud.includes(audience))) return;
    throw new Error(`token is for another audience: ${JSON.stringify(aud)}`);
  }

  /** The verifying key of a kid; an unknown kid reads the keys again first (a key another instance or the operator added). */
  private async publicKeyOf(kid: string | undefined): Promise<KeyLike> {
    if (kid === undefined) throw new Error('token has no kid');
    if (!this.publicKeys.has(kid)) await this.reread(this.unknownKidRereadMs);
    const key = this.publicKeys.get(kid);
    if (!key) throw new Error(`unknown kid ${JSON.stringify(kid)}`);
    return key;
  }

  /** Reads the keys again when the last read is KEY_REFRESH_MS old. */
  private async fresh(): Promise<void> {
    if (performance.now() - this.readAt >= this.refreshMs) await this.reread(0);
  }

  /** Reads the keys again, no sooner than `minGapMs` after the last read; concurrent callers share one read. */
  private reread(minGapMs: number): Promise<void> {
    this.reading ??= (async () => {
      try {
        const wait = this.readAt + minGapMs - performance.now();
        if (wait > 0) await sleep(wait);
        const stored = await this.secrets.get(SIGNING_KEY_SECRET);
        if (stored !== undefined) await this.adopt(stored);
      } finally {
        this.reading = undefined;
      }
    })();
    return this.reading;
  }

  /** Takes the stored keys as the current ones; keys known already are not imported again. */
  private async adopt(stored: string): Promise<void> {
    const keys = parseSigningKeys(stored);
    const publicKeys = new Map<string, KeyLike>();
    for (const key of keys) {
      const { kid } = key.jwk;
      publicKeys.set(kid, this.publicKeys.get(kid) ?? (await importJWK(publicJwkOf(key), SIGNING_ALG)));
    }
    const newest = keys.at(-1)!;
    const signing = this.signing?.kid === newest.jwk.kid ? this.signing : { kid: newest.jwk.kid, key: await importJWK(newest.jwk, SIGNING_ALG) };
    this.publicKeys = publicKeys;
    this.publicJwks = keys.map(publicJwkOf);
    this.signing = signing;
    this.readAt = performance.now();
  }
}

import { hash, verify } from '@node-rs/argon2';

/**
 * Password hashing: argon2id (RFC 9106) with the library's defaults
 * (19 MiB, 2 passes — OWASP's minimum), as a PHC string that carries its own
 * parameters, so they can be raised later without breaking old hashes.
 */
// `Algorithm.Argon2id` is an ambient const enum (2), which verbatimModuleSyntax cannot import.
const OPTIONS = { algorithm: 2 } as const;

export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 200;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

/** A hash of nothing anyone knows, verified when the email is unknown so that both answers take as long. */
let decoy: Promise<string> | undefined;

export async function verifyPassword(passwordHash: string | undefined, password: string): Promise<boolean> {
  if (passwordHash === undefined) {
    decoy ??= hashPassword(`decoy-${Math.random()}`);
    await verify(await decoy, password).catch(() => false);
    return false;
  }
  return verify(passwordHash, password).catch(() => false);
}

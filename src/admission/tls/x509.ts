// @peculiar/x509 resolves its algorithms through tsyringe, which needs a Reflect metadata
// polyfill loaded before it: this module is the only place that imports the library.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

// Node's own WebCrypto does the key generation and signing.
x509.cryptoProvider.set(webcrypto as Crypto);

export { x509 };
export const subtle = webcrypto.subtle as SubtleCrypto;

/** ECDSA P-256: keys generate in milliseconds, and every TLS stack accepts them. */
export const KEY_ALGORITHM: EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
export const SIGNING_ALGORITHM: EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };

// Checks the receipt Arbiter puts on every tool call it forwards, with nothing but
// node:crypto: copy this file into an MCP server to tell a governed call from one that went
// around the proxy. A receipt is a C2SP signed note (https://c2sp.org/signed-note) in
// params._meta["dev.arbiter/receipt"], signed with Arbiter's audit signing key, whose text is
//
//   arbiter-receipt/v1
//   decision <decision id>
//   audit <audit entry id>
//   actor <actor id>
//   capability mcp.<server>.<tool>
//   arguments sha256:<hex SHA-256 of the RFC 8785 JSON of the call's arguments>
//   issued <RFC 3339 time>
//
// Usage, in a tools/call handler (notes-server.mjs does this):
//   const key = parseVerifierKey(vkeyText); // "name+keyid+base64", as arbiter audit keygen printed it
//   const refused = receiptRefusal(key, request.params); // the tool error to answer, or undefined
//   if (refused) return refused;
// or checkReceipt(request.params._meta?.[RECEIPT_META], key, { arguments, tool }), which throws a ReceiptError.
//
// The same check as `arbiter receipt verify` (test/mcp/receipt-checkers.test.ts holds both to it).
import { Buffer } from 'node:buffer';
import { createHash, createPublicKey, verify } from 'node:crypto';

export const RECEIPT_META = 'dev.arbiter/receipt';

const VERSION = 'arbiter-receipt/v1';
const FIELDS = ['decision', 'audit', 'actor', 'capability', 'arguments', 'issued'];
const MAX_RECEIPT_BYTES = 8192;
const ED25519 = 0x01;
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
// eslint-disable-next-line no-control-regex -- control characters are what is looked for
const CONTROL = /[\u0000-\u0009\u000b-\u001f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why a receipt proves nothing: `code` is receipt_missing, receipt_malformed, receipt_unverified, arguments_mismatch or capability_mismatch. */
export class ReceiptError extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.name = 'ReceiptError';
    this.code = code;
  }
}

/** @param {string} name */
function isKeyName(name) {
  return name.length > 0 && !/[\s+]/u.test(name) && !/\p{Zs}/u.test(name) && !CONTROL.test(name);
}

/** @param {string} name @param {Buffer} typeAndKey */
function keyIdOf(name, typeAndKey) {
  return createHash('sha256').update(name).update('\n').update(typeAndKey).digest().readUInt32BE(0);
}

/**
 * A verifier key (`name+keyid+base64(0x01 || Ed25519 public key)`).
 * @param {string} vkey
 * @returns {{ name: string, keyId: number, publicKey: import('node:crypto').KeyObject }}
 */
export function parseVerifierKey(vkey) {
  const [name = '', idHex = '', ...rest] = vkey.trim().split('+');
  const material = rest.join('+');
  if (!isKeyName(name) || !/^[0-9a-f]{8}$/.test(idHex) || !BASE64.test(material))
    throw new Error('not a verifier key (name+keyid+base64)');
  const bytes = Buffer.from(material, 'base64');
  if (bytes.length !== 33 || bytes[0] !== ED25519)
    throw new Error('the verifier key is not of an Ed25519 signer (type 0x01)');
  const keyId = Number.parseInt(idHex, 16);
  if (keyIdOf(name, bytes) !== keyId) throw new Error(`the verifier key ID ${idHex} does not match its key`);
  const publicKey = createPublicKey({
    key: Buffer.concat([SPKI_PREFIX, bytes.subarray(1)]),
    format: 'der',
    type: 'spki',
  });
  return { name, keyId, publicKey };
}

/** RFC 8785 JSON: members sorted by UTF-16 code units, values as JSON.stringify writes them. */
export function canonicalJson(/** @type {unknown} */ value) {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value)
      .filter((k) => /** @type {Record<string, unknown>} */ (value)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(/** @type {Record<string, unknown>} */ (value)[k])}`);
    return `{${members.join(',')}}`;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('not a JSON number');
  return JSON.stringify(value);
}

/** How Arbiter names a tool in a capability (mcp.<server>.<this>): one to one, in [a-z0-9_-]. */
export function toolSegment(/** @type {string} */ tool) {
  let encoded = '';
  for (const char of tool) {
    if (/[a-z0-9_]/.test(char)) encoded += char;
    else if (char === '-') encoded += '--';
    else if (/[A-Z]/.test(char)) encoded += `-${char.toLowerCase()}`;
    else if (char === '.') encoded += '-0';
    else encoded += `-1${/** @type {number} */ (char.codePointAt(0)).toString(16)}-`;
  }
  return /^[a-z]/.test(encoded) ? encoded : `x-2${encoded}`;
}

/**
 * Checks a receipt: one signature, by `key`, over the seven lines; for these arguments and
 * this tool when given. Answers what the receipt says; throws a ReceiptError otherwise.
 * @param {unknown} receipt
 * @param {{ name: string, keyId: number, publicKey: import('node:crypto').KeyObject }} key
 * @param {{ arguments?: Record<string, unknown>, tool?: string }} [expected]
 */
export function checkReceipt(receipt, key, expected = {}) {
  if (receipt === undefined || receipt === null)
    throw new ReceiptError('receipt_missing', 'the call carries no receipt');
  if (typeof receipt !== 'string') throw new ReceiptError('receipt_malformed', 'the receipt is not text');
  const text = openReceipt(receipt, key);
  const facts = readFields(text);
  if (expected.tool !== undefined) {
    const [prefix, server, ...tool] = facts.capability.split('.');
    if (
      prefix !== 'mcp' ||
      !/^[a-z][a-z0-9_-]*$/.test(server ?? '') ||
      tool.join('.') !== toolSegment(expected.tool)
    )
      throw new ReceiptError(
        'capability_mismatch',
        `the receipt is for ${facts.capability}, not tool ${expected.tool}`,
      );
  }
  if (expected.arguments !== undefined) {
    const digest = `sha256:${createHash('sha256').update(canonicalJson(expected.arguments), 'utf8').digest('hex')}`;
    if (facts.arguments !== digest)
      throw new ReceiptError('arguments_mismatch', 'the receipt is for other arguments');
  }
  return { ...facts, signer: key.name };
}

/**
 * For a tools/call handler: the tool error result to answer when `key` is given and the
 * call's receipt does not hold for this tool and these arguments; undefined otherwise.
 * @param {ReturnType<typeof parseVerifierKey> | undefined} key
 * @param {{ name: string, arguments?: Record<string, unknown>, _meta?: Record<string, unknown> }} params
 */
export function receiptRefusal(key, params) {
  if (!key) return undefined;
  try {
    checkReceipt(params._meta?.[RECEIPT_META], key, { arguments: params.arguments ?? {}, tool: params.name });
    return undefined;
  } catch (err) {
    if (!(err instanceof ReceiptError)) throw err;
    return { content: [{ type: 'text', text: `refused: ${err.message} (${err.code})` }], isError: true };
  }
}

/** @param {string} message */
const malformed = (message) => new ReceiptError('receipt_malformed', message);

/**
 * The text of a note with one signature line, by `key`, that verifies.
 * @param {string} receipt
 * @param {{ name: string, keyId: number, publicKey: import('node:crypto').KeyObject }} key
 */
function openReceipt(receipt, key) {
  if (Buffer.byteLength(receipt, 'utf8') > MAX_RECEIPT_BYTES)
    throw malformed('the receipt is larger than 8 KiB');
  if (CONTROL.test(receipt) || LONE_SURROGATE.test(receipt) || receipt.includes('\uFFFD'))
    throw malformed('the receipt holds a control character or is not valid UTF-8');
  const split = receipt.lastIndexOf('\n\n');
  if (split < 0) throw malformed('the receipt has no blank line before its signature');
  const text = receipt.slice(0, split + 1);
  const block = receipt.slice(split + 2);
  if (!block.endsWith('\n')) throw malformed('the receipt must end with a newline');
  const lines = block.slice(0, -1).split('\n');
  const signatures = lines.map(parseSignature);
  if (signatures.length !== 1) throw malformed('a receipt carries exactly one signature');
  const [{ name, keyId, signature }] = signatures;
  if (name !== key.name || keyId !== key.keyId)
    throw new ReceiptError('receipt_unverified', `the receipt is not signed by ${key.name}`);
  if (signature.length !== 64 || !verify(null, Buffer.from(text, 'utf8'), key.publicKey, signature))
    throw new ReceiptError('receipt_unverified', `the signature of ${key.name} does not verify`);
  return text;
}

/** @param {string} line */
function parseSignature(line) {
  if (!line.startsWith('\u2014 ')) throw malformed('a signature line must start with "— "');
  const rest = line.slice(2);
  const space = rest.lastIndexOf(' ');
  const name = rest.slice(0, Math.max(space, 0));
  const encoded = rest.slice(space + 1);
  if (!isKeyName(name)) throw malformed('a signature line has an invalid key name');
  if (!BASE64.test(encoded) || encoded.length % 4 !== 0)
    throw malformed(`the signature of ${name} is not base64`);
  const payload = Buffer.from(encoded, 'base64');
  if (payload.length < 5) throw malformed(`the signature of ${name} is too short`);
  return { name, keyId: payload.readUInt32BE(0), signature: payload.subarray(4) };
}

/** @param {string} text */
function readFields(text) {
  const [version, ...lines] = text.slice(0, -1).split('\n');
  if (version !== VERSION) throw malformed(`the receipt's text does not start with ${VERSION}`);
  if (lines.length !== FIELDS.length) throw malformed(`the receipt has ${lines.length + 1} lines, not 7`);
  /** @type {Record<string, string>} */
  const facts = {};
  FIELDS.forEach((field, i) => {
    const line = lines[i];
    if (!line.startsWith(`${field} `) || line.length === field.length + 1)
      throw malformed(`line ${i + 2} of the receipt is not "${field} <value>"`);
    facts[field] = line.slice(field.length + 1);
  });
  if (!/^sha256:[0-9a-f]{64}$/.test(facts.arguments))
    throw malformed("the receipt's arguments are not a sha256: digest");
  if (
    !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(facts.issued) ||
    Number.isNaN(Date.parse(facts.issued))
  )
    throw malformed("the receipt's issued time is not an RFC 3339 time");
  return /** @type {{ decision: string, audit: string, actor: string, capability: string, arguments: string, issued: string }} */ (
    facts
  );
}

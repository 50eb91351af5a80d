/**
 * RFC 8785 (JCS) canonical JSON written as UTF-8 bytes into a reused buffer: keys sorted
 * by UTF-16 code units, numbers and strings as ECMAScript's JSON.stringify writes them.
 *
 * Every audit append seals its entry with it. Writing bytes in place leaves no text on the
 * heap: JSON.stringify of a 1.3 KB entry allocated 2.4 KB (it builds its result in
 * doubling parts), and hashing or storing that text copied it again.
 */

// Stryker disable next-line ArithmeticOperator: the first size only decides when the buffer grows (growth is tested)
const INITIAL_BYTES = 64 * 1024;
/** A scratch buffer grown past this by one large value is not kept for the next. */
// Stryker disable next-line ArithmeticOperator: the size of buffer kept changes memory, not the bytes written
const KEPT_BYTES = 1024 * 1024;
/** Strings up to this length are copied a character at a time; longer ones natively. */
const SHORT_STRING = 32;

// Characters JSON.stringify escapes (or, for lone surrogates, may): those strings take its path.
// eslint-disable-next-line no-control-regex -- control characters are exactly what must be escaped
const NEEDS_ESCAPING = /["\\\u0000-\u001f\ud800-\udfff]/;

/** Where a member named `key` would go in the top-level object, to splice it in later. */
export interface MemberPlace {
  /** Byte offset to insert the member's text at. */
  offset: number;
  /** Whether a member is written before that offset (the inserted text then starts with a comma). */
  afterMember: boolean;
  /** Whether a member is written after it (the inserted text then ends with a comma). */
  beforeMember: boolean;
}

class CanonicalWriter {
  private bytes = Buffer.allocUnsafe(INITIAL_BYTES);
  private length = 0;
  // Stryker disable next-line BooleanLiteral: a shared writer taken as busy only makes every call use one of its own (tested to write the same)
  busy = false;

  /** Writes `value`; `placeOf` asks for where a top-level member of that name would go. */
  write(value: unknown, placeOf?: string): { bytes: Buffer; place: MemberPlace | undefined } {
    this.length = 0;
    let place: MemberPlace | undefined;
    // Stryker disable next-line ConditionalExpression: asked for no place, object() writes what value() writes and returns no place
    if (placeOf !== undefined && isPlainRecord(value)) {
      place = this.object(value, placeOf);
    } else if (!this.value(value)) {
      throw new TypeError('value is not serialisable as JSON');
    }
    return { bytes: this.bytes.subarray(0, this.length), place };
  }

  /** After use: a buffer one huge value grew is let go. */
  release(): void {
    if (this.bytes.length > KEPT_BYTES) this.bytes = Buffer.allocUnsafe(INITIAL_BYTES);
    this.busy = false;
  }

  /** Writes a value; false (nothing written) for what JSON leaves out: undefined, functions, symbols. */
  private value(value: unknown): boolean {
    switch (typeof value) {
      case 'string':
        this.string(value);
        return true;
      case 'number':
        if (!Number.isFinite(value)) throw new TypeError(`${value} is not allowed in canonical JSON`);
        this.ascii(String(value));
        return true;
      case 'boolean':
        this.ascii(value ? 'true' : 'false');
        return true;
      case 'bigint':
        throw new TypeError('BigInt is not allowed in canonical JSON');
      case 'object':
        if (value === null) this.ascii('null');
        else if (Array.isArray(value)) this.array(value);
        else if (hasToJson(value)) return this.value(value.toJSON());
        else this.object(value as Record<string, unknown>);
        return true;
      default:
        return false;
    }
  }

  private array(items: readonly unknown[]): void {
    this.byte(0x5b); // [
    for (let i = 0; i < items.length; i++) {
      if (i > 0) this.byte(0x2c); // ,
      if (!this.value(items[i])) this.ascii('null');
    }
    this.byte(0x5d); // ]
  }

  /**
   * Writes an object's own members in key order. Most objects are in order already and
   * are written as they are enumerated; the others from their sorted keys. (The order is
   * checked before writing: finding it wrong after a member would write that member's
   * subtree twice, and nested disordered objects exponentially often.)
   */
  private object(record: Record<string, unknown>, placeOf?: string): MemberPlace | undefined {
    if (!ownKeysAscending(record)) return this.sortedObject(record, placeOf);
    this.byte(0x7b); // {
    let written = false;
    let mark: number | undefined;
    // Stryker disable next-line BooleanLiteral: read only once mark is set, which sets it too
    let markedAfterMember = false;
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      if (placeOf !== undefined && mark === undefined && key > placeOf) {
        mark = this.length;
        markedAfterMember = written;
      }
      written = this.member(key, record[key], written) || written;
    }
    this.byte(0x7d); // }
    return placeOf === undefined ? undefined : this.place(mark, markedAfterMember, written);
  }

  private sortedObject(record: Record<string, unknown>, placeOf?: string): MemberPlace | undefined {
    this.byte(0x7b);
    let written = false;
    let mark: number | undefined;
    // Stryker disable next-line BooleanLiteral: as in object()
    let markedAfterMember = false;
    for (const key of Object.keys(record).sort()) {
      if (placeOf !== undefined && mark === undefined && key > placeOf) {
        mark = this.length;
        markedAfterMember = written;
      }
      written = this.member(key, record[key], written) || written;
    }
    this.byte(0x7d);
    return placeOf === undefined ? undefined : this.place(mark, markedAfterMember, written);
  }

  /**
   * The place of a member at `mark` (where the first greater key began) in the object just
   * written; at its end when no key was greater.
   */
  private place(mark: number | undefined, markedAfterMember: boolean, written: boolean): MemberPlace {
    const closing = this.length - 1;
    if (mark === undefined) return { offset: closing, afterMember: written, beforeMember: false };
    return { offset: mark, afterMember: markedAfterMember, beforeMember: closing > mark };
  }

  /** Writes `,"key":value` (no comma first); false, and nothing written, when the value is left out. */
  private member(key: string, value: unknown, afterMember: boolean): boolean {
    const start = this.length;
    if (afterMember) this.byte(0x2c); // ,
    this.string(key);
    this.byte(0x3a); // :
    if (this.value(value)) return true;
    this.length = start;
    return false;
  }

  private string(text: string): void {
    // Stryker disable next-line EqualityOperator: which path writes a string changes only the speed: both write what JSON.stringify does (tested)
    if (text.length <= SHORT_STRING && this.shortString(text)) return;
    if (NEEDS_ESCAPING.test(text)) {
      this.utf8(JSON.stringify(text));
      return;
    }
    this.byte(0x22);
    this.utf8(text);
    this.byte(0x22);
  }

  /** A short string with nothing to escape and no character beyond ASCII, a byte each; false if it has one. */
  private shortString(text: string): boolean {
    this.reserve(text.length + 2);
    const bytes = this.bytes;
    let at = this.length;
    bytes[at++] = 0x22;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code < 0x20 || code === 0x22 || code === 0x5c || code > 0x7e) return false;
      bytes[at++] = code;
    }
    bytes[at++] = 0x22;
    this.length = at;
    return true;
  }

  private ascii(text: string): void {
    this.reserve(text.length);
    this.length += this.bytes.write(text, this.length, 'latin1');
  }

  private utf8(text: string): void {
    this.reserve(text.length * 3); // a UTF-16 code unit is at most 3 bytes of UTF-8
    this.length += this.bytes.write(text, this.length, 'utf8');
  }

  private byte(value: number): void {
    this.reserve(1);
    this.bytes[this.length++] = value;
  }

  private reserve(more: number): void {
    if (this.length + more <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + more));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }
}

/** Whether the object's own keys enumerate in ascending UTF-16 order (integer-like keys come first, whatever their order). */
function ownKeysAscending(record: Record<string, unknown>): boolean {
  let previous: string | undefined;
  for (const key in record) {
    // Stryker disable next-line ConditionalExpression: inherited keys enumerate after own ones, so they can only send an object to sortedObject, which writes the same
    if (!Object.hasOwn(record, key)) continue;
    if (previous !== undefined && key < previous) return false;
    previous = key;
  }
  // Stryker disable next-line BooleanLiteral: false only sends every object to sortedObject, which writes the same bytes
  return true;
}

/** Whether JSON writes the value's toJSON() instead of the value. */
export function hasToJson(value: object): value is { toJSON: () => unknown } {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !hasToJson(value);
}

// One writer serves every call; a call made while it is in use (from inside `use`) gets its own.
const shared = new CanonicalWriter();

/**
 * Calls `use` with the canonical JSON of `value` as UTF-8 bytes. The bytes are a view
 * of a buffer the next call writes over: copy what must outlive `use`.
 * Throws a TypeError for what canonical JSON cannot hold (a non-finite number, a BigInt,
 * nothing at all).
 */
export function withCanonicalBytes<T>(value: unknown, use: (bytes: Buffer) => T): T {
  return withWriter((writer) => use(writer.write(value).bytes));
}

/**
 * withCanonicalBytes for an object, also telling where a top-level member named `key`
 * would go: the audit chain hashes an entry without its `hash` member and stores it with
 * that member spliced in, without writing it twice. Throws a TypeError for an object that
 * already has a member `key` to write: the spliced text would hold it twice.
 */
export function withCanonicalBytesAndPlace<T>(
  value: Record<string, unknown>,
  key: string,
  use: (bytes: Buffer, place: MemberPlace) => T,
): T {
  return withWriter((writer) => {
    const written = writer.write(value, key);
    if (written.place === undefined) throw new TypeError('value is not a plain object');
    if (Object.hasOwn(value, key) && value[key] !== undefined) {
      throw new TypeError(`value already has a member ${JSON.stringify(key)}`);
    }
    return use(written.bytes, written.place);
  });
}

function withWriter<T>(run: (writer: CanonicalWriter) => T): T {
  const writer = shared.busy ? new CanonicalWriter() : shared;
  writer.busy = true;
  try {
    return run(writer);
    // Stryker disable next-line BlockStatement: a writer left busy only makes later calls use writers of their own
  } finally {
    writer.release();
  }
}

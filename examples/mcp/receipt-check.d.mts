import type { KeyObject } from 'node:crypto';

export declare const RECEIPT_META: 'dev.arbiter/receipt';

export declare class ReceiptError extends Error {
  readonly code:
    | 'receipt_missing'
    | 'receipt_malformed'
    | 'receipt_unverified'
    | 'arguments_mismatch'
    | 'capability_mismatch';
}

export interface ReceiptVerifierKey {
  name: string;
  keyId: number;
  publicKey: KeyObject;
}

export interface CheckedReceipt {
  decision: string;
  audit: string;
  actor: string;
  capability: string;
  arguments: string;
  issued: string;
  signer: string;
}

export declare function parseVerifierKey(vkey: string): ReceiptVerifierKey;
export declare function canonicalJson(value: unknown): string;
export declare function toolSegment(tool: string): string;
export declare function checkReceipt(
  receipt: unknown,
  key: ReceiptVerifierKey,
  expected?: { arguments?: Record<string, unknown>; tool?: string },
): CheckedReceipt;
export declare function receiptRefusal(
  key: ReceiptVerifierKey | undefined,
  params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
): { content: Array<{ type: 'text'; text: string }>; isError: true } | undefined;

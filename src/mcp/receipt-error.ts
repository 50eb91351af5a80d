/** A receipt that proves nothing, with a stable code (the same codes as examples/mcp/receipt-check.mjs). */
export class ReceiptError extends Error {
  constructor(
    readonly code:
      | 'receipt_missing'
      | 'receipt_malformed'
      | 'receipt_unverified'
      | 'arguments_mismatch'
      | 'capability_mismatch',
    message: string,
  ) {
    super(message);
    this.name = 'ReceiptError';
  }
}
